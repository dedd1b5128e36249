"""GP6xx rules. Importing `rules` registers them (`gpuport.scan.rules.load`); the other
modules here can be imported alone, registering nothing."""
