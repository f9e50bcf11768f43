"""Tests of the event-sourced game service: codec, store, referee, races, workers."""
