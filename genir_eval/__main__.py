import sys

from genir_eval.cli import main

sys.exit(main())
