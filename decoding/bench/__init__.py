"""Benchmarks of the decoder: tokens per second and acceptance by method, and grounded-answer speed.

Kept out of the runtime: nothing the service imports reaches this package. Plotting needs the
optional ``bench`` extra (``pip install 'akm-evidence[bench]'``).
"""
