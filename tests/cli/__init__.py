"""Tests of the red7 command-line client."""
