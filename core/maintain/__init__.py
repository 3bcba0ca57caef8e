"""Fleet maintenance: table health (``health``) and policy-driven upkeep (``maintain``).

Above ``system`` (it reads the same metadata the ``inspect`` kinds show) and ``compact`` /
``operation`` (whose procedures it runs); below ``api``.
"""
