"""`python -m terag_neo4j.cli`, the same as `terag`."""

import sys

from terag_neo4j.cli.main import main

if __name__ == "__main__":
    sys.exit(main())
