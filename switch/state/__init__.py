"""The switch's control-plane state in Python (tables, externs, replication) and the interface every data-path backend meets; built on the program model."""
