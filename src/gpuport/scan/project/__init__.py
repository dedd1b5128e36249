"""The project model: the project as its ROCm build sees it, read before the rules run.

Which files are read (:mod:`files`, :mod:`gitindex`), the build model (:mod:`build_model`,
:mod:`build_setup_ast`, :mod:`build_cmake_model`), preprocessor facts the project states about
itself (:mod:`cxx_facts`, :mod:`cxx_includes`), the ROCm route (:mod:`routes`), scopes
(:mod:`scopes`), the project's own names (:mod:`own_names`), optional extras (:mod:`extras`),
and the view that puts them together and applies them to the findings (:mod:`view`).

Nothing here imports a rule family (``gpuport.scan.rules.<family>``); the families may import
the model. Importing this package loads none of its modules (hipify reads files through
:mod:`files` alone).
"""
