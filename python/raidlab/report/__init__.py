"""Reports of simulated (and later measured) runs: fio-shaped JSON, sysbench-style text and
terminal tables. Each takes the plain result dict the core returns (see
:func:`raidlab.sim.simulate`) and never re-computes what the core measured."""
