"""CPU per round trip across the sandbox's channel, on each side, by kind of call.

    python benchmarks/round_trip_cost.py [--calls 20000]

A served object's method called from student code (a callback: lesson 01's
``agent.get_action``), with a deferred call and a mirrored environment's step riding on
it as a Taxi loop's do; and the grader calling a student's method (a request: lessons 02
and 05's ``buffer.sample``) with a deferred ``add`` ahead of it. Prints microseconds of
CPU per call on the grader's side and in the sandbox, to compare against the channel's
physical floor (a raw socketpair's round trip, measured in the same run).
"""
