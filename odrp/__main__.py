"""``python -m odrp``: the ``odrp`` command."""

import sys

from odrp.cli import main

sys.exit(main())
