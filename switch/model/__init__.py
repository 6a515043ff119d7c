"""The program model: a BMv2 JSON program validated, laid out and read once; what both engines generate code from, and the limits they share. Imports nothing above it."""
