"""Run and time: each cell (a case at sizes, or a plain script) in several case processes per side,
sides interleaved (``runner``, with its parts ``cells``, ``attempts``, ``stopping``, ``storing``,
``locks``), each process started by its side's long-lived worker (``worker``, ``launch``) and run
in isolation, optionally pinned to CPUs (``child``, ``case_process``, ``isolation``, ``guardian``),
timed after JAX's benchmarking guide with loops for short programs (``timing``), its compiled HLO
counted (``hlo``), the machine's load over its window recorded (``load``); a plain script's run
(``script_process``) under its start-up hook (``script_hook``, ``script_capture``), where a process
died (``deaths``) and whether its venv's files were what was installed (``venv_files``), its
printed figures and numbers (``figures``, ``script_numbers``, ``benchmark_json``), where a suite's
import goes (``import_times``); ``sides`` reads a plan of sides."""
