"""Answer keys and visible checks of the exercise notebooks, one module per notebook."""
