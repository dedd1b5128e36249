"""GP5xx rules. Importing `checker` registers them (`gpuport.scan.rules.load`); the other
modules here can be imported alone, registering nothing."""
