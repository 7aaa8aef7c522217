import sys

from harness.main import main

sys.exit(main())
