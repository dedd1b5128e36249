"""Allow ``python -m gpuport``."""

from gpuport.cli.app import main

if __name__ == "__main__":
    main()
