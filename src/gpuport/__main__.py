"""Allow ``python -m gpuport``."""

from gpuport.cli.entry import main

if __name__ == "__main__":
    main()
