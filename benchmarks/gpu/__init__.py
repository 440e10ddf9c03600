"""Checks that need an NVIDIA GPU, built here and run prebuilt where the GPU is."""
