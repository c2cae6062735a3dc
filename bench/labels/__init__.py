"""Labels and the judge: coverage of the combined interval, and the review queue page."""
