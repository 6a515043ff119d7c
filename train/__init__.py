"""ina.train: data-parallel SGD of small numpy models with gradients all-reduced through the switch."""
