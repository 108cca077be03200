"""The live preview's worker process (procanim_addon/worker_process.py), driven as Blender's side
drives it: a plain Python started on the file, jobs and answers over its stdin/stdout, cancel and
progress through the shared control block. Its answers must be exactly what the same engine call
gives in this process."""

from __future__ import annotations

import json
import pickle
import subprocess
import sys
import time

import numpy as np
import pytest

from procanim_addon import duck, ghost, jobs, rigs, worker_process as wp

AMPLITUDE = 6.0


@pytest.fixture
def child(tmp_path):
    """A worker process on the engine as a top-level package (no parents), and its control."""
    path = str(tmp_path / "control")
    control = wp.Control(path, create=True)
    proc = subprocess.Popen([sys.executable, "-I", wp.__file__, path, "procanim_addon", json.dumps([])],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    kind, pid, _ = wp.read(proc.stdout)
    assert kind == "ready" and pid == proc.pid
    yield proc, control
    if proc.poll() is None:
        proc.kill()
    proc.wait(5)
    control.close()


def duck_job(frames=96, **changes):
    skeleton, rigmap = rigs.duck_skeleton()
    params = duck.DuckParams(frame_start=1, frame_end=frames, amplitude=AMPLITUDE, **changes)
    body = ghost.Body(name="Duck", skeleton=skeleton, rigmap=rigmap, world=np.eye(4))
    return jobs.EngineCall(jobs.duck_walk, (skeleton, rigmap, params)), [body]


def send(proc, job_id, call, bodies):
    wp.write(proc.stdin, "job", job_id, pickle.dumps((call, bodies)))


def test_a_job_answers_what_the_same_call_gives_here(child):
    proc, _control = child
    call, bodies = duck_job()
    send(proc, 1, call, bodies)
    kind, job_id, payload = wp.read(proc.stdout)
    assert (kind, job_id) == ("done", 1)
    there = pickle.loads(payload)
    here = wp.run(call, bodies, lambda _f: None)
    assert len(there["clips"]) == 1 and there["engine_s"] > 0 and there["seconds"] >= there["engine_s"]
    a, b = there["clips"][0], here["clips"][0]
    assert np.array_equal(a.rotations, b.rotations) and np.array_equal(a.locations, b.locations)
    assert np.array_equal(there["ghosts"][0].heads, here["ghosts"][0].heads)


def test_a_cancel_ends_the_running_job_at_its_next_report(child):
    proc, control = child
    call, bodies = duck_job(frames=20000, key_interval=1)  # a few seconds of engine work
    t0 = time.perf_counter()
    send(proc, 7, call, bodies)
    while control.calls < 2:  # the engine is under way
        time.sleep(0.002)
    assert 0.0 <= control.fraction < 1.0
    control.cancel_id = 7
    kind, job_id, _ = wp.read(proc.stdout)
    assert (kind, job_id) == ("cancelled", 7)
    assert time.perf_counter() - t0 < 2.0
    small, bodies = duck_job()
    send(proc, 8, small, bodies)  # the next job runs (the cancel was for job 7 only)
    assert wp.read(proc.stdout)[:2] == ("done", 8)


def test_bad_input_is_the_message_and_the_process_goes_on(child):
    proc, _control = child
    call, bodies = duck_job()
    bad = jobs.EngineCall(jobs.duck_walk, (call.args[0], call.args[1], duck.DuckParams(frame_start=10, frame_end=5)))
    send(proc, 3, bad, bodies)
    kind, job_id, message = wp.read(proc.stdout)
    assert (kind, job_id) == ("error", 3) and b"rame" in message
    wp.write(proc.stdin, "job", 4, b"not a pickle")
    kind, job_id, message = wp.read(proc.stdout)
    assert (kind, job_id) == ("error", 4) and message.startswith(b"ProcAnim failed")
    send(proc, 5, call, bodies)
    assert wp.read(proc.stdout)[:2] == ("done", 5)


def test_quit_and_the_end_of_input_end_the_process(child):
    proc, _control = child
    wp.write(proc.stdin, "quit", 0, b"")
    assert proc.wait(5) == 0
