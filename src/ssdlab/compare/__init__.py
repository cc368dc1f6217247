"""Several stored runs side by side: matching points, ratios, significance and regression gates."""
