"""DL8.5: caching branch-and-bound search for optimal decision trees."""
