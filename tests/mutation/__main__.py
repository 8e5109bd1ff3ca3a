"""``python -m tests.mutation``: see :mod:`tests.mutation`."""

import sys

from . import main

sys.exit(main())
