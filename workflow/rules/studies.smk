# One collect target per study of the registry (mpdp.studies.registry), named by its id — `wddp`,
# `admm`, `voting`, `ls`, `benchmark` — and by its older names (`zz`, `hamm`): every figure and table
# of the study, as each study's rule file lists them in STUDY_OUTPUTS (common.smk). A study without
# outputs in this config (switched off, or no available data set) gets an empty target.


for _study in study_registry.STUDIES:
    for _target in (_study.id, *_study.aliases):

        rule:
            name:
                _target
            input:
                STUDY_OUTPUTS.get(_study.id, []),
