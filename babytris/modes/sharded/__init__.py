"""The sharded solve over dask.distributed: each shard's boards on a worker
(table shards, and lean shards without a move table), the values sent worker
to worker, the lookups asked of the owner shard, the plan sized from a run.

Imports the lean mode beside it (its search, backup and policy walk), the
solvers and the layers below them.
"""
