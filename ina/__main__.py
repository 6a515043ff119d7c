import sys

from ina.cli import main

sys.exit(main())
