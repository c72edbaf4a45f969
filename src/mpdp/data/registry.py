"""The data sets: the five of the WD-DP paper and their pinned raw files (spec experiments.md E1, E1.1).

Each raw file is pinned by the SHA-256 of its *uncompressed* content. The pipeline stores it
uncompressed under ``data/raw/<dataset id>/<file name>``. It obtains the file from a mirror
folder laid out like ``../shared/datasets`` (a gzip copy at :attr:`RawFile.mirror_path`) or
from the canonical upstream URLs, unpacking as :attr:`Source.unpack` says. The values below
are copied from the mirror's ``MANIFEST.tsv`` and ``README.md``; nothing reads ``../shared``
at run time (spec E1.1).
"""

from __future__ import annotations

import re

from mpdp.data.info import DatasetInfo, RawFile, Source
from mpdp.errors import ConfigError

_UCI = "https://archive.ics.uci.edu/ml/machine-learning-databases"
_UCI_STATIC = "https://archive.ics.uci.edu/static/public"
_UCI_LICENSE = "CC BY 4.0 (UCI Machine Learning Repository)"

KDDCUP99 = DatasetInfo(
    id="kddcup99",
    display_name="KDDCup99",
    files=(
        RawFile(
            name="kddcup.data_10_percent",
            sha256="f8c8267ebcd9c0ed1fd7d6277fe5bfff8732e9b7db8e61b873542b2a534b6f9a",
            size=74_889_749,
            mirror_path="kddcup99/kddcup.data_10_percent.gz",
            sources=(
                Source(
                    "http://kdd.ics.uci.edu/databases/kddcup99/kddcup.data_10_percent.gz", ("gzip",)
                ),
                Source(f"{_UCI}/kddcup99-mld/kddcup.data_10_percent.gz", ("gzip",)),
                Source("https://ndownloader.figshare.com/files/5976042", ("gzip",)),
                Source(
                    f"{_UCI_STATIC}/130/kdd+cup+1999+data.zip",
                    ("zip:kddcup.data_10_percent.gz", "gzip"),
                ),
            ),
        ),
    ),
    positive_label="attack (any label other than 'normal.')",
    homepage="http://kdd.ics.uci.edu/databases/kddcup99/kddcup99.html",
    license=_UCI_LICENSE,
    doi="10.24432/C51C7N",
    citation="Hettich & Bay (1999), The UCI KDD Archive: KDD Cup 1999 Data",
    preprocess_keys=("preprocess.kdd_sample_size",),
    multiclass=True,
    paper_shape=(56000, 119),
    record_cap_key="preprocess.kdd_sample_size",
)

ADULT = DatasetInfo(
    id="adult",
    display_name="Adult",
    files=(
        RawFile(
            name="adult.data",
            sha256="5b00264637dbfec36bdeaab5676b0b309ff9eb788d63554ca0a249491c86603d",
            size=3_974_305,
            mirror_path="adult/adult.data.gz",
            sources=(
                Source(f"{_UCI}/adult/adult.data"),
                Source(f"{_UCI_STATIC}/2/adult.zip", ("zip:adult.data",)),
            ),
        ),
        RawFile(
            name="adult.test",
            sha256="a2a9044bc167a35b2361efbabec64e89d69ce82d9790d2980119aac5fd7e9c05",
            size=2_003_153,
            mirror_path="adult/adult.test.gz",
            sources=(
                Source(f"{_UCI}/adult/adult.test"),
                Source(f"{_UCI_STATIC}/2/adult.zip", ("zip:adult.test",)),
            ),
        ),
    ),
    positive_label="income '>50K'",
    homepage="https://archive.ics.uci.edu/dataset/2/adult",
    license=_UCI_LICENSE,
    doi="10.24432/C5XW20",
    citation="Becker & Kohavi (1996), Adult, UCI Machine Learning Repository",
    paper_shape=(36177, 105),
)

BANK = DatasetInfo(
    id="bank",
    display_name="Bank Marketing",
    files=(
        RawFile(
            name="bank-additional-full.csv",
            sha256="74adfc578bf77a7ff4bb1ba4a9f8709d9e3c6907342959c2c8416847e0afb4d8",
            size=5_834_924,
            mirror_path="bank_marketing/bank-additional-full.csv.gz",
            sources=(
                Source(
                    f"{_UCI}/00222/bank-additional.zip",
                    ("zip:bank-additional/bank-additional-full.csv",),
                ),
                Source(
                    f"{_UCI_STATIC}/222/bank+marketing.zip",
                    ("zip:bank-additional.zip", "zip:bank-additional/bank-additional-full.csv"),
                ),
            ),
        ),
    ),
    positive_label="y == 'yes' (client subscribed a term deposit)",
    homepage="https://archive.ics.uci.edu/dataset/222/bank+marketing",
    license=_UCI_LICENSE,
    doi="10.24432/C5K306",
    citation="Moro, Cortez & Rita (2014), Decision Support Systems 62:22-31",
    preprocess_keys=("preprocess.bank_keep_duration",),
    paper_shape=(32950, 64),
)

BREAST_CANCER = DatasetInfo(
    id="breast_cancer",
    display_name="Breast Cancer Wisconsin (Original)",
    files=(
        RawFile(
            name="breast-cancer-wisconsin.data",
            sha256="402c585309c399237740f635ef9919dc512cca12cbeb20de5e563a4593f22b64",
            size=19_889,
            mirror_path="breast_cancer_wisconsin/breast-cancer-wisconsin.data.gz",
            sources=(
                Source(f"{_UCI}/breast-cancer-wisconsin/breast-cancer-wisconsin.data"),
                Source(
                    f"{_UCI_STATIC}/15/breast+cancer+wisconsin+original.zip",
                    ("zip:breast-cancer-wisconsin.data",),
                ),
            ),
        ),
    ),
    positive_label="class 4 (malignant)",
    homepage="https://archive.ics.uci.edu/dataset/15/breast+cancer+wisconsin+original",
    license=_UCI_LICENSE,
    doi="10.24432/C5HP4Z",
    citation="Mangasarian & Wolberg (1990), SIAM News 23(5):1-18",
    preprocess_keys=("preprocess.breast_cancer_missing",),
    paper_shape=(559, 10),
)

CREDIT_CARD = DatasetInfo(
    id="credit_card",
    display_name="Credit Card Fraud",
    files=(
        RawFile(
            name="creditcard.csv",
            sha256="76274b691b16a6c49d3f159c883398e03ccd6d1ee12d9d8ee38f4b4b98551a89",
            size=150_828_752,
            mirror_path="creditcard/creditcard.csv.gz",
            sources=(
                Source(
                    "https://storage.googleapis.com/download.tensorflow.org/data/creditcard.csv"
                ),
                Source("https://zenodo.org/records/7395559/files/creditcard.csv?download=1"),
            ),
        ),
    ),
    positive_label="Class == 1 (fraud)",
    homepage="https://www.kaggle.com/datasets/mlg-ulb/creditcardfraud",
    license="ODbL v1.0 (database) + DbCL v1.0 (contents), as listed on Kaggle",
    doi="10.5281/zenodo.7395559",
    citation=(
        "Dal Pozzolo, Caelen, Johnson & Bontempi (2015), Calibrating Probability with "
        "Undersampling for Unbalanced Classification, IEEE CIDM"
    ),
    preprocess_keys=("preprocess.credit_card_normals",),
    paper_shape=(787, 31),
)

#: data set id -> description, in the panel order (a)-(e) of the WD-DP figures (spec E1). A
#: data set added by its own module (docs/development.md "How to add a data set") is one more
#: entry of this tuple.
DATASETS: dict[str, DatasetInfo] = {
    info.id: info for info in (KDDCUP99, ADULT, BANK, BREAST_CANCER, CREDIT_CARD)
}


def pattern(ids: tuple[str, ...] | None = None) -> str:
    """A regular expression matching exactly the ids ``ids`` (default: every data set), for the
    workflow's wildcard constraints."""
    return "|".join(re.escape(ds) for ds in (tuple(DATASETS) if ids is None else ids))


def multiclass() -> tuple[str, ...]:
    """The data sets whose parser yields a multiclass label (spec E5)."""
    return tuple(ds for ds, info in DATASETS.items() if info.multiclass)


def get(dataset_id: str) -> DatasetInfo:
    """The description of ``dataset_id``, or a ConfigError listing the known ids."""
    try:
        return DATASETS[dataset_id]
    except KeyError:
        raise ConfigError(
            f"unknown data set {dataset_id!r}; known data sets: {', '.join(DATASETS)}"
        ) from None
