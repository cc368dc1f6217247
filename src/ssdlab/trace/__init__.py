"""Block traces: formats people have (fio iologs, blkparse text, blktrace binary, SNIA IOTTA MSR-Cambridge, Alibaba
and Tencent CBS CSVs) read into one columnar Trace (model.py, formats.py), characterized (characterize.py),
fitted to a suite file (fit.py) and mapped onto a target's span for replay (mapping.py). Pure numpy: nothing here
starts a process; fio's iolog replay lives in fio/replay.py, the simulator's in sim/replay.py.
"""
