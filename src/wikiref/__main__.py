import sys

from wikiref.cli import main

sys.exit(main())
