# The terag service image (docker-compose.yml's `terag`): the package with its service and spaCy
# extras, installed from constraints.txt as `make setup` does (exact pins, no resolver), without
# the `st` extra (torch, CUDA, sentence-transformers: about 4 GB): the packaged embedders are ONNX.
FROM python:3.11-slim
ENV HF_HUB_OFFLINE=1 TOKENIZERS_PARALLELISM=false PIP_DISABLE_PIP_VERSION_CHECK=1
WORKDIR /app
COPY constraints.txt ./
RUN pip install --no-cache-dir uv==0.13.8 \
 && grep -vE '^(#|$)' constraints.txt \
    | grep -vE '^(torch|triton|nvidia-[a-z0-9-]+|cuda-[a-z]+|sentence-transformers|transformers)==' \
    > /tmp/lock.txt \
 && uv pip install --system --no-cache --no-deps -r /tmp/lock.txt
COPY pyproject.toml README.md ./
COPY terag_neo4j terag_neo4j
COPY cypher cypher
RUN uv pip install --system --no-cache --no-deps .
EXPOSE 8000
CMD ["terag", "serve", "--host", "0.0.0.0", "--port", "8000"]
