"""The submitting process's memory as the dataset grows (see __main__)."""
