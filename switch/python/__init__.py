"""The Python engine: the program model compiled to Python source and run, with state/'s objects."""
