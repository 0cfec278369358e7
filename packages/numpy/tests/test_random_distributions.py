"""The samplers of `polyjax.random`: JAX's bits, distributions, dtypes, shapes, errors, transforms.

Known answers were produced by JAX 0.10.2 (default configuration: threefry2x32,
`jax_threefry_partitionable`) in a separate environment and pasted here: a key
gives exactly JAX's numbers. For the larger draws the first values and the mean
of the whole draw are pinned; the same draws then go through statistical checks
against SciPy's distributions (Kolmogorov-Smirnov tests and moments; the keys
are fixed, so these checks are deterministic).

Compilation dominates the cost (each sampler signature compiles once, the
rejection loops slowly), so each large draw is made once and shared.
"""

from __future__ import annotations

import functools
import math

import ml_dtypes
import numpy as np
import pytest
import scipy.special
import scipy.stats

import polyjax_core.errors
from polyjax_core.config import enable_x64
from polyjax_core.make_jaxpr import make_jaxpr
from polyjax_interpreters.ad import grad
from polyjax_interpreters.batching import vmap
from polyjax_interpreters.jit import eval_shape, jit
from polyjax_interpreters.test_util import check_grads
from polyjax_numpy import random

BF16 = np.dtype(ml_dtypes.bfloat16)

# ---------------------------------------------------------------------------
# Known answers (values from JAX 0.10.2)

# name: (draw, dtype, shape, first values, mean of the whole draw)
DRAWS = {
    "bernoulli": (
        lambda: random.bernoulli(random.PRNGKey(0), 0.3, (2000,)),
        "bool",
        (2000,),
        [False, False, False, False, False, True, False, False],
        0.307,
    ),
    "bernoulli_high": (
        lambda: random.bernoulli(random.PRNGKey(1), 0.3, (2000,), mode="high"),
        "bool",
        (2000,),
        [False, False, False, False, False, False, False, False],
        0.311,
    ),
    "rademacher": (
        lambda: random.rademacher(random.PRNGKey(2), (2000,)),
        "int32",
        (2000,),
        [-1, -1, 1, -1, 1, 1, -1, 1],
        0.022,
    ),
    "exponential": (
        lambda: random.exponential(random.PRNGKey(3), (2000,)),
        "float32",
        (2000,),
        [
            0.07693781703710556,
            2.7829513549804688,
            1.046846628189087,
            3.7140326499938965,
            0.3262535035610199,
            0.8745205402374268,
            0.11261511594057083,
            0.4805648922920227,
        ],
        0.98277775371202,
    ),
    "laplace": (
        lambda: random.laplace(random.PRNGKey(4), (2000,)),
        "float32",
        (2000,),
        [
            -1.4316827058792114,
            -0.7760459184646606,
            1.2727067470550537,
            -0.30377450585365295,
            -0.0027162334881722927,
            -0.20639926195144653,
            0.7183016538619995,
            -1.5295284986495972,
        ],
        -0.01635415631142678,
    ),
    "logistic": (
        lambda: random.logistic(random.PRNGKey(5), (2000,)),
        "float32",
        (2000,),
        [
            -0.1346837282180786,
            2.454378128051758,
            1.0243041515350342,
            -2.2531111240386963,
            2.3697285652160645,
            0.7433558702468872,
            -4.066922664642334,
            -2.8603076934814453,
        ],
        0.0027291954159736633,
    ),
    "cauchy": (
        lambda: random.cauchy(random.PRNGKey(6), (2000,)),
        "float32",
        (2000,),
        [
            0.5112136602401733,
            -0.8059661388397217,
            -6.774716854095459,
            -2.660292387008667,
            2.1124982833862305,
            -0.5931192636489868,
            -0.20436885952949524,
            -2.944366455078125,
        ],
        -0.5179886127733043,
    ),
    "gumbel": (
        lambda: random.gumbel(random.PRNGKey(7), (2000,)),
        "float32",
        (2000,),
        [
            0.9304105043411255,
            3.6608431339263916,
            -0.17776018381118774,
            0.20822525024414062,
            1.1599655151367188,
            0.7753099799156189,
            0.22097797691822052,
            0.11879245191812515,
        ],
        0.5859733264226515,
    ),
    "gumbel_high": (
        lambda: random.gumbel(random.PRNGKey(8), (2000,), mode="high"),
        "float32",
        (2000,),
        [
            1.0688670873641968,
            2.415100574493408,
            -1.7631866931915283,
            -0.22349224984645844,
            1.7745745182037354,
            1.9878793954849243,
            1.4652416706085205,
            -0.9194227457046509,
        ],
        0.5815022654585773,
    ),
    "pareto": (
        lambda: random.pareto(random.PRNGKey(9), 4.5, (2000,)),
        "float32",
        (2000,),
        [
            1.0092946290969849,
            2.142284393310547,
            1.128617763519287,
            1.0242043733596802,
            1.0579192638397217,
            1.473219633102417,
            1.0861515998840332,
            1.0103634595870972,
        ],
        1.279379098713398,
    ),
    "rayleigh": (
        lambda: random.rayleigh(random.PRNGKey(10), 2.0, (2000,)),
        "float32",
        (2000,),
        [
            5.087027549743652,
            2.835165023803711,
            1.9349380731582642,
            2.291363477706909,
            2.7286810874938965,
            5.416531085968018,
            1.3815675973892212,
            1.77596116065979,
        ],
        2.48356807570532,
    ),
    "weibull_min": (
        lambda: random.weibull_min(random.PRNGKey(11), 2.0, 1.5, (2000,)),
        "float32",
        (2000,),
        [
            0.7625924348831177,
            0.1420283019542694,
            2.3821451663970947,
            1.1274526119232178,
            1.92079758644104,
            1.0350035429000854,
            0.15088433027267456,
            2.9268243312835693,
        ],
        1.7983588952431455,
    ),
    "lognormal": (
        lambda: random.lognormal(random.PRNGKey(12), 0.5, (2000,)),
        "float32",
        (2000,),
        [
            1.1362124681472778,
            1.042423129081726,
            1.057848334312439,
            0.6853810548782349,
            1.0756690502166748,
            0.36372071504592896,
            2.595597267150879,
            1.4200588464736938,
        ],
        1.1268940191343426,
    ),
    "geometric": (
        lambda: random.geometric(random.PRNGKey(13), 0.3, (2000,)),
        "int32",
        (2000,),
        [1, 3, 1, 1, 2, 1, 2, 4],
        3.279,
    ),
    "truncated_normal": (
        lambda: random.truncated_normal(random.PRNGKey(14), -1.0, 2.0, (2000,)),
        "float32",
        (2000,),
        [
            -0.594882607460022,
            1.0119768381118774,
            -0.9773597717285156,
            -0.88907790184021,
            -0.24996720254421234,
            0.3613426685333252,
            1.3127429485321045,
            -0.05314663425087929,
        ],
        0.21667276202217908,
    ),
    "maxwell": (
        lambda: random.maxwell(random.PRNGKey(15), (2000,)),
        "float32",
        (2000,),
        [
            0.8138888478279114,
            1.4092912673950195,
            0.5380898714065552,
            1.7672717571258545,
            0.89540696144104,
            1.1137895584106445,
            1.9701998233795166,
            1.8475128412246704,
        ],
        1.563834359012544,
    ),
    "double_sided_maxwell": (
        lambda: random.double_sided_maxwell(random.PRNGKey(16), 1.0, 2.0, (2000,)),
        "float32",
        (2000,),
        [
            -1.3948044776916504,
            4.9496002197265625,
            -3.331836700439453,
            3.4667937755584717,
            -3.6963491439819336,
            4.054265022277832,
            4.401751518249512,
            3.804333448410034,
        ],
        1.0382560691535472,
    ),
    "triangular": (
        lambda: random.triangular(random.PRNGKey(17), 0.0, 0.3, 1.0, (2000,)),
        "float32",
        (2000,),
        [
            0.2750808000564575,
            0.7144736051559448,
            0.5949556827545166,
            0.3371405005455017,
            0.5728397369384766,
            0.2810410261154175,
            0.3591817021369934,
            0.6180230379104614,
        ],
        0.4344081962388009,
    ),
    "wald": (
        lambda: random.wald(random.PRNGKey(18), 2.0, (2000,)),
        "float32",
        (2000,),
        [
            27.5135555267334,
            3.012509822845459,
            0.8148107528686523,
            2.503106117248535,
            0.5597021579742432,
            2.806793689727783,
            0.8826067447662354,
            1.0961885452270508,
        ],
        1.9824950167536735,
    ),
    "gamma": (
        lambda: random.gamma(random.PRNGKey(19), np.array([0.4, 3.0], np.float32), (1000, 2)),
        "float32",
        (1000, 2),
        [
            0.06421878188848495,
            3.539454460144043,
            0.4739834666252136,
            2.726165771484375,
            0.012854213826358318,
            1.2633823156356812,
            0.1348104178905487,
            1.6081827878952026,
        ],
        1.746464775599605,
    ),
    "loggamma": (
        lambda: random.loggamma(random.PRNGKey(20), np.array([0.05, 2.0], np.float32), (1000, 2)),
        "float32",
        (1000, 2),
        [
            -41.4504508972168,
            1.834290623664856,
            -70.29863739013672,
            0.3735632002353668,
            -11.826891899108887,
            1.2332676649093628,
            -4.388803005218506,
            0.8177129626274109,
        ],
        -9.782649043940008,
    ),
    "beta": (
        lambda: random.beta(random.PRNGKey(21), 2.0, 3.0, (2000,)),
        "float32",
        (2000,),
        [
            0.13981221616268158,
            0.7487487196922302,
            0.3578028678894043,
            0.4951566457748413,
            0.3457416594028473,
            0.40099474787712097,
            0.5497184991836548,
            0.10832880437374115,
        ],
        0.39886384023120625,
    ),
    "dirichlet": (
        lambda: random.dirichlet(
            random.PRNGKey(22), np.array([0.5, 1.0, 2.0], np.float32), (1000,)
        ),
        "float32",
        (1000, 3),
        [
            0.05654486268758774,
            0.3572702407836914,
            0.5861849784851074,
            0.0013885946245864034,
            0.29215118288993835,
            0.706460177898407,
            0.38986554741859436,
            0.1900913268327713,
        ],
        0.33333333289914857,
    ),
    "chisquare": (
        lambda: random.chisquare(random.PRNGKey(23), 3.0, (2000,)),
        "float32",
        (2000,),
        [
            4.926701545715332,
            1.2157939672470093,
            4.909345626831055,
            4.199469566345215,
            1.7977230548858643,
            0.11591950058937073,
            0.540276825428009,
            4.507783889770508,
        ],
        3.039875923083164,
    ),
    "t": (
        lambda: random.t(random.PRNGKey(24), 5.0, (2000,)),
        "float32",
        (2000,),
        [
            -0.14063335955142975,
            -2.238050699234009,
            -0.6925635933876038,
            -3.0493977069854736,
            -1.1226868629455566,
            1.855928659439087,
            -0.2892490029335022,
            0.38594943284988403,
        ],
        -0.016981347199900482,
    ),
    "f": (
        lambda: random.f(random.PRNGKey(25), 5.0, 10.0, (2000,)),
        "float32",
        (2000,),
        [
            2.0464441776275635,
            0.5102645754814148,
            0.7095490097999573,
            2.1064741611480713,
            2.4932446479797363,
            0.6892349720001221,
            0.12713007628917694,
            3.069890260696411,
        ],
        1.2296038081739098,
    ),
    "generalized_normal": (
        lambda: random.generalized_normal(random.PRNGKey(26), 1.5, (2000,)),
        "float32",
        (2000,),
        [
            1.429081678390503,
            0.08266420662403107,
            -1.1711127758026123,
            -1.0447324514389038,
            -0.3378007411956787,
            0.12249842286109924,
            0.41235220432281494,
            -0.3752676546573639,
        ],
        0.02678616563481046,
    ),
    "poisson": (
        lambda: random.poisson(
            random.PRNGKey(27), np.array([0.5, 4.0, 30.0, 200.0], np.float32), (500, 4)
        ),
        "int32",
        (500, 4),
        [0, 2, 31, 188, 0, 3, 29, 194],
        58.4995,
    ),
    "binomial": (
        lambda: random.binomial(
            random.PRNGKey(28),
            np.array([5.0, 100.0, 1000.0], np.float32),
            np.array([0.3, 0.7, 0.05], np.float32),
            (600, 3),
        ),
        "float32",
        (600, 3),
        [1.0, 71.0, 53.0, 0.0, 66.0, 56.0, 1.0, 74.0],
        40.23111111111111,
    ),
    "multinomial": (
        lambda: random.multinomial(
            random.PRNGKey(29), 50.0, np.array([0.2, 0.3, 0.5], np.float32), shape=(500, 3)
        ),
        "float32",
        (500, 3),
        [9.0, 12.0, 29.0, 6.0, 14.0, 30.0, 8.0, 14.0],
        16.666666666666668,
    ),
    "categorical": (
        lambda: random.categorical(
            random.PRNGKey(30), np.log(np.array([0.1, 0.2, 0.7], np.float32)), shape=(2000,)
        ),
        "int32",
        (2000,),
        [2, 2, 2, 2, 2, 2, 2, 2],
        1.6095,
    ),
    "choice_p": (
        lambda: random.choice(
            random.PRNGKey(31), 4, (2000,), p=np.array([0.1, 0.2, 0.3, 0.4], np.float32)
        ),
        "int32",
        (2000,),
        [0, 3, 2, 3, 3, 2, 2, 3],
        2.011,
    ),
    "choice": (
        lambda: random.choice(random.PRNGKey(32), 7, (2000,)),
        "int32",
        (2000,),
        [5, 5, 2, 0, 5, 2, 3, 1],
        3.0025,
    ),
    "permutation": (
        lambda: random.permutation(random.PRNGKey(33), 200),
        "int32",
        (200,),
        [45, 121, 107, 8, 132, 99, 20, 80],
        99.5,
    ),
    "mvn_cholesky": (
        lambda: random.multivariate_normal(
            random.PRNGKey(34),
            np.array([1.0, -1.0], np.float32),
            np.array([[2.0, 0.5], [0.5, 1.0]], np.float32),
            (2000,),
        ),
        "float32",
        (2000, 2),
        [
            2.298184871673584,
            -1.4609919786453247,
            3.7503461837768555,
            0.9197700023651123,
            2.40585994720459,
            -2.265596866607666,
            4.1091437339782715,
            -0.1278957724571228,
        ],
        -0.0012454023510217666,
    ),
    "mvn_eigh": (
        lambda: random.multivariate_normal(
            random.PRNGKey(34),
            np.array([1.0, -1.0], np.float32),
            np.array([[2.0, 0.5], [0.5, 1.0]], np.float32),
            (2000,),
            method="eigh",
        ),
        "float32",
        (2000, 2),
        [
            2.4654321670532227,
            -1.2777336835861206,
            -0.14529597759246826,
            -3.3488059043884277,
            3.711482524871826,
            -0.8349852561950684,
            1.610028624534607,
            -2.86625337600708,
        ],
        0.025931760102510453,
    ),
    "mvn_svd": (
        lambda: random.multivariate_normal(
            random.PRNGKey(34),
            np.array([1.0, -1.0], np.float32),
            np.array([[2.0, 0.5], [0.5, 1.0]], np.float32),
            (2000,),
            method="svd",
        ),
        "float32",
        (2000, 2),
        [
            0.02622467279434204,
            -2.212736129760742,
            -2.118180274963379,
            -1.022003173828125,
            0.22463458776474,
            -2.987318515777588,
            -2.052079677581787,
            -2.166516065597534,
        ],
        -0.021537417262792586,
    ),
    "orthogonal": (
        lambda: random.orthogonal(random.PRNGKey(35), 4, (50,)),
        "float32",
        (50, 4, 4),
        [
            0.5384731292724609,
            0.5359968543052673,
            -0.6390727758407593,
            0.11974954605102539,
            -0.4238255023956299,
            0.49195051193237305,
            0.19331619143486023,
            0.7355172634124756,
        ],
        0.015218492695014447,
    ),
    "ball": (
        lambda: random.ball(random.PRNGKey(36), 3, 2, (1000,)),
        "float32",
        (1000, 3),
        [
            -0.3673599362373352,
            0.7979094982147217,
            0.029794109985232353,
            -0.04225475713610649,
            0.5690842866897583,
            -0.4151442348957062,
            0.15520383417606354,
            -0.9212486147880554,
        ],
        -0.017646104005946957,
    ),
}

# name: (draw, dtype, shape, values)
SMALL = {
    "exponential_f16": (
        lambda: random.exponential(random.PRNGKey(0), (5,), np.float16),
        "float16",
        (5,),
        [0.371826171875, 0.2393798828125, 0.056243896484375, 1.0673828125, 0.264404296875],
    ),
    "laplace_bf16": (
        lambda: random.laplace(random.PRNGKey(0), (5,), "bfloat16"),
        "bfloat16",
        (5,),
        [-0.357421875, -0.15625, 1.1484375, 0.890625, -0.5546875],
    ),
    "gumbel_f16": (
        lambda: random.gumbel(random.PRNGKey(5), (5,), np.float16),
        "float16",
        (5,),
        [0.92919921875, 1.89453125, -1.03125, -0.29541015625, 4.84765625],
    ),
    "truncated_normal_bf16": (
        lambda: random.truncated_normal(random.PRNGKey(0), -1.0, 1.0, (5,), "bfloat16"),
        "bfloat16",
        (5,),
        [0.2578125, 0.123046875, -0.625, -0.53125, 0.369140625],
    ),
    "gamma_f16": (
        lambda: random.gamma(random.PRNGKey(0), 3.0, (5,), np.float16),
        "float16",
        (5,),
        [2.46484375, 1.7353515625, 1.830078125, 3.9375, 2.078125],
    ),
    "gamma_bf16": (
        lambda: random.gamma(random.PRNGKey(0), 0.5, (5,), "bfloat16"),
        "bfloat16",
        (5,),
        [0.0286865234375, 2.109375, 0.34765625, 0.78515625, 0.09814453125],
    ),
    "beta_f16": (
        lambda: random.beta(random.PRNGKey(0), 2.0, 3.0, (5,), np.float16),
        "float16",
        (5,),
        [0.56103515625, 0.485107421875, 0.289794921875, 0.35302734375, 0.249755859375],
    ),
    "t_bf16": (
        lambda: random.t(random.PRNGKey(0), 3.0, (5,), "bfloat16"),
        "bfloat16",
        (5,),
        [5.3125, -0.326171875, 1.1484375, 0.55859375, 1.21875],
    ),
    "binomial_f16": (
        lambda: random.binomial(random.PRNGKey(0), 10.0, 0.3, (5,), np.float16),
        "float16",
        (5,),
        [2.0, 2.0, 1.0, 2.0, 1.0],
    ),
    "normal_f16": (
        lambda: random.normal(random.PRNGKey(0), (5,), np.float16),
        "float16",
        (5,),
        [-0.49365234375, -0.79541015625, -1.5986328125, 0.40283203125, -0.72998046875],
    ),
    "uniform_bf16": (
        lambda: random.uniform(random.PRNGKey(1), (5,), "bfloat16", 0.1, 2.3),
        "bfloat16",
        (5,),
        [1.6640625, 0.63671875, 1.1484375, 2.15625, 1.515625],
    ),
    "normal_c64": (
        lambda: random.normal(random.PRNGKey(3), (3,), np.complex64),
        "complex64",
        (3,),
        [
            complex(-1.681740164756775, -1.3740651607513428),
            complex(-1.2064419984817505, 0.07411617785692215),
            complex(-0.3474697470664978, -0.03365090489387512),
        ],
    ),
    "poisson_i16": (
        lambda: random.poisson(random.PRNGKey(2), 4.0, (5,), np.int16),
        "int16",
        (5,),
        [5, 5, 1, 5, 7],
    ),
    "geometric_i16": (
        lambda: random.geometric(random.PRNGKey(4), np.float16(0.2), (5,), np.int16),
        "int16",
        (5,),
        [4, 4, 4, 6, 1],
    ),
    "rademacher_f32": (
        lambda: random.rademacher(random.PRNGKey(3), (5,), np.float32),
        "float32",
        (5,),
        [1.0, -1.0, -1.0, -1.0, 1.0],
    ),
    "bernoulli_arr": (
        lambda: random.bernoulli(random.PRNGKey(1), np.array([0.1, 0.5, 0.9], np.float32)),
        "bool",
        (3,),
        [False, False, True],
    ),
    "categorical_axis0": (
        lambda: random.categorical(
            random.PRNGKey(2), np.zeros((4, 2), np.float32), axis=0, shape=(3, 2)
        ),
        "int32",
        (3, 2),
        [3, 0, 2, 3, 2, 0],
    ),
    "categorical_norep": (
        lambda: random.categorical(
            random.PRNGKey(1),
            np.zeros((2, 4, 3), np.float32),
            axis=1,
            shape=(2, 2, 3),
            replace=False,
        ),
        "int32",
        (2, 2, 3),
        [2, 1, 1, 0, 1, 0, 3, 2, 0, 2, 0, 3],
    ),
    "categorical_high": (
        lambda: random.categorical(
            random.PRNGKey(0), np.zeros((3,), np.float32), shape=(5,), mode="high"
        ),
        "int32",
        (5,),
        [2, 2, 0, 2, 1],
    ),
    "choice_norep": (
        lambda: random.choice(random.PRNGKey(0), 10, (5,), replace=False),
        "int32",
        (5,),
        [0, 1, 8, 5, 6],
    ),
    "choice_p_norep": (
        lambda: random.choice(
            random.PRNGKey(0),
            5,
            (3,),
            replace=False,
            p=np.array([0.1, 0.2, 0.3, 0.15, 0.25], np.float32),
        ),
        "int32",
        (3,),
        [1, 0, 4],
    ),
    "choice_arr": (
        lambda: random.choice(
            random.PRNGKey(0), np.arange(12.0, dtype=np.float32).reshape(3, 4), (2,), axis=1
        ),
        "float32",
        (3, 2),
        [1.0, 0.0, 5.0, 4.0, 9.0, 8.0],
    ),
    "choice_arr_norep": (
        lambda: random.choice(
            random.PRNGKey(1),
            np.arange(12.0, dtype=np.float32).reshape(3, 4),
            (2,),
            replace=False,
            axis=1,
        ),
        "float32",
        (3, 2),
        [3.0, 2.0, 7.0, 6.0, 11.0, 10.0],
    ),
    "permutation_arr": (
        lambda: random.permutation(
            random.PRNGKey(0), np.arange(12, dtype=np.int32).reshape(3, 4), axis=1
        ),
        "int32",
        (3, 4),
        [0, 1, 3, 2, 4, 5, 7, 6, 8, 9, 11, 10],
    ),
    "permutation_ind": (
        lambda: random.permutation(
            random.PRNGKey(0), np.arange(12, dtype=np.int32).reshape(3, 4), axis=1, independent=True
        ),
        "int32",
        (3, 4),
        [0, 1, 3, 2, 5, 6, 4, 7, 8, 10, 11, 9],
    ),
    "permutation_rounds": (
        lambda: random.permutation(random.PRNGKey(0), 20000)[:6],
        "int32",
        (6,),
        [15169, 124, 644, 1427, 3892, 656],
    ),
    "double_sided_maxwell_arr": (
        lambda: random.double_sided_maxwell(random.PRNGKey(0), np.zeros(2, np.float32), 1.0),
        "float32",
        (2, 2),
        [1.5457209348678589, 1.5741275548934937, -2.0825304985046387, 2.292417287826538],
    ),
    "orthogonal_wide": (
        lambda: random.orthogonal(random.PRNGKey(0), 2, m=3),
        "float32",
        (2, 3),
        [
            0.96083664894104,
            -0.2567500174045563,
            0.1042710393667221,
            0.18604838848114014,
            0.31881120800971985,
            -0.9293790459632874,
        ],
    ),
    "mvn_batch": (
        lambda: random.multivariate_normal(
            random.PRNGKey(0),
            np.zeros((2, 2), np.float32),
            np.array([[[2.0, 0.5], [0.5, 1.0]], [[1.0, 0.0], [0.0, 3.0]]], np.float32),
        ),
        "float32",
        (2, 2),
        [2.29476261138916, 2.4681522846221924, -0.4335944354534149, -0.13616923987865448],
    ),
    "ball_p": (
        lambda: random.ball(random.PRNGKey(1), 2, 1.5, (2,)),
        "float32",
        (2, 2),
        [-0.1835406869649887, 0.5597913265228271, 0.4423619508743286, 0.5739902853965759],
    ),
    "generalized_normal_f16": (
        lambda: random.generalized_normal(random.PRNGKey(0), 1.5, (4,), np.float16),
        "float16",
        (4,),
        [0.68115234375, 1.279296875, -0.74755859375, 0.50732421875],
    ),
    "typed_gamma": (
        lambda: random.gamma(random.key(5), np.array([1.5, 0.2], np.float32)),
        "float32",
        (2,),
        [2.2879326343536377, 0.0191486869007349],
    ),
    "typed_poisson": (
        lambda: random.poisson(random.key(5), np.array([1.5, 20.0], np.float32)),
        "int32",
        (2,),
        [0, 21],
    ),
    "typed_permutation": (
        lambda: random.permutation(random.key(5), 7),
        "int32",
        (7,),
        [0, 2, 4, 1, 3, 5, 6],
    ),
}


@functools.cache
def draw(name: str) -> np.ndarray:
    return np.asarray(DRAWS[name][0]())


def _as_numpy(values: list, dtype: str) -> np.ndarray:
    """JAX's values (Python bools, ints, complexes or floats) as an array of `dtype`."""
    dt = BF16 if dtype == "bfloat16" else np.dtype(dtype)
    if dt.kind == "f" or dt == BF16:
        return np.asarray(values, np.float64).astype(dt)  # exact: the values are of `dt`
    return np.asarray(values, dt)


@pytest.mark.parametrize("name", sorted(DRAWS))
def test_known_answers(name):
    _, dtype, shape, head, mean = DRAWS[name]
    x = draw(name)
    assert str(x.dtype) == dtype and x.shape == shape
    np.testing.assert_array_equal(x.reshape(-1)[: len(head)], np.asarray(head, x.dtype))
    np.testing.assert_allclose(np.mean(x.astype(np.float64)), mean, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("name", sorted(SMALL))
def test_known_answers_small(name):
    fun, dtype, shape, values = SMALL[name]
    x = fun()
    assert str(x.dtype) == dtype and x.shape == shape
    np.testing.assert_array_equal(np.asarray(x), _as_numpy(values, dtype).reshape(shape))


# ---------------------------------------------------------------------------
# Distributions: the pinned draws against SciPy

# name: (the continuous distribution of the draw (flattened), how to map the draw first)
CONTINUOUS = {
    "exponential": (scipy.stats.expon(), None),
    "laplace": (scipy.stats.laplace(), None),
    "logistic": (scipy.stats.logistic(), None),
    "cauchy": (scipy.stats.cauchy(), None),
    "gumbel": (scipy.stats.gumbel_r(), None),
    "gumbel_high": (scipy.stats.gumbel_r(), None),
    "pareto": (scipy.stats.pareto(4.5), None),
    "rayleigh": (scipy.stats.rayleigh(scale=2.0), None),
    "weibull_min": (scipy.stats.weibull_min(1.5, scale=2.0), None),
    "lognormal": (scipy.stats.lognorm(0.5), None),
    "truncated_normal": (scipy.stats.truncnorm(-1.0, 2.0), None),
    "maxwell": (scipy.stats.maxwell(), None),
    # |x - loc| / scale is Maxwell.
    "double_sided_maxwell": (scipy.stats.maxwell(), lambda x: np.abs(x - 1.0) / 2.0),
    "triangular": (scipy.stats.triang(0.3), None),
    "wald": (scipy.stats.invgauss(2.0), None),
    "beta": (scipy.stats.beta(2.0, 3.0), None),
    "chisquare": (scipy.stats.chi2(3.0), None),
    "t": (scipy.stats.t(5.0), None),
    "f": (scipy.stats.f(5.0, 10.0), None),
    "generalized_normal": (scipy.stats.gennorm(1.5), None),
    # The radius of a uniform point of the 3-ball has P(r <= s) = s**3.
    "ball": (scipy.stats.uniform(), lambda x: np.linalg.norm(x, axis=-1) ** 3),
}


@pytest.mark.parametrize("name", sorted(CONTINUOUS))
def test_continuous_distribution(name):
    dist, transform = CONTINUOUS[name]
    x = draw(name).astype(np.float64)
    if transform is not None:
        x = transform(x)
    assert np.isfinite(x).all()
    assert scipy.stats.kstest(x.reshape(-1), dist.cdf).pvalue > 1e-3


def _assert_mean(x, mean, std):
    """The sample mean is within 5 standard errors of `mean`."""
    x = np.asarray(x, np.float64)
    assert abs(x.mean() - mean) < 5 * std / math.sqrt(x.size), (x.mean(), mean)


@pytest.mark.parametrize("column, a", [(0, 0.4), (1, 3.0)])
def test_gamma_distribution(column, a):
    x = draw("gamma")[:, column].astype(np.float64)
    assert (x > 0).all()
    assert scipy.stats.kstest(x, scipy.stats.gamma(a).cdf).pvalue > 1e-3


@pytest.mark.parametrize("column, a", [(0, 0.05), (1, 2.0)])
def test_loggamma_distribution(column, a):
    # Log-space draws keep their precision where the draws underflow as floats.
    x = draw("loggamma")[:, column].astype(np.float64)
    assert np.isfinite(x).all()
    assert scipy.stats.kstest(x, scipy.stats.loggamma(a).cdf).pvalue > 1e-3


def test_dirichlet_distribution():
    x = draw("dirichlet").astype(np.float64)
    alpha = np.array([0.5, 1.0, 2.0])
    np.testing.assert_allclose(x.sum(-1), 1.0, rtol=1e-6)
    for i, a in enumerate(alpha):
        marginal = scipy.stats.beta(a, alpha.sum() - a)
        assert scipy.stats.kstest(x[:, i], marginal.cdf).pvalue > 1e-3


@pytest.mark.parametrize("name, p", [("bernoulli", 0.3), ("bernoulli_high", 0.3)])
def test_bernoulli_distribution(name, p):
    x = draw(name)
    _assert_mean(x, p, math.sqrt(p * (1 - p)))


def test_rademacher_and_geometric_distributions():
    signs = draw("rademacher")
    assert set(np.unique(signs).tolist()) == {-1, 1}
    _assert_mean(signs, 0.0, 1.0)
    trials = draw("geometric")
    assert trials.min() >= 1
    dist = scipy.stats.geom(0.3)
    _assert_mean(trials, dist.mean(), dist.std())
    _assert_mean((trials - dist.mean()) ** 2, dist.var(), 3 * dist.var())


def test_poisson_distribution():
    x = draw("poisson")
    for i, lam in enumerate([0.5, 4.0, 30.0, 200.0]):  # Knuth below 10, PTRS above
        _assert_mean(x[:, i], lam, math.sqrt(lam))
        _assert_mean((x[:, i] - lam) ** 2.0, lam, math.sqrt(2 * lam * lam + lam))


def test_binomial_distribution():
    x = draw("binomial")
    for i, (n, p) in enumerate([(5.0, 0.3), (100.0, 0.7), (1000.0, 0.05)]):
        col = x[:, i]
        assert (col == np.floor(col)).all() and col.min() >= 0 and col.max() <= n
        var = n * p * (1 - p)
        _assert_mean(col, n * p, math.sqrt(var))
        _assert_mean((col - n * p) ** 2, var, 2 * var)


def test_multinomial_distribution():
    x = draw("multinomial")
    np.testing.assert_array_equal(x.sum(-1), 50.0)
    for i, p in enumerate([0.2, 0.3, 0.5]):
        _assert_mean(x[:, i], 50 * p, math.sqrt(50 * p * (1 - p)))


@pytest.mark.parametrize(
    "name, probs",
    [
        ("categorical", [0.1, 0.2, 0.7]),
        ("choice_p", [0.1, 0.2, 0.3, 0.4]),
        ("choice", [1 / 7] * 7),
    ],
)
def test_frequencies(name, probs):
    x = draw(name)
    counts = np.bincount(x, minlength=len(probs))
    assert len(counts) == len(probs)
    assert scipy.stats.chisquare(counts, np.asarray(probs) * x.size).pvalue > 1e-3


def test_permutation_is_a_permutation():
    np.testing.assert_array_equal(np.sort(draw("permutation")), np.arange(200))


@pytest.mark.parametrize("method", ["cholesky", "eigh", "svd"])
def test_multivariate_normal_moments(method):
    x = draw(f"mvn_{method}").astype(np.float64)
    np.testing.assert_allclose(x.mean(0), [1.0, -1.0], atol=0.12)
    np.testing.assert_allclose(np.cov(x.T), [[2.0, 0.5], [0.5, 1.0]], atol=0.15)


def test_orthogonal_matrices():
    q = draw("orthogonal").astype(np.float64)
    np.testing.assert_allclose(
        q @ np.swapaxes(q, -1, -2), np.broadcast_to(np.eye(4), q.shape), atol=1e-5
    )
    # A column of a Haar-random orthogonal 4x4 matrix is uniform on the sphere: each
    # coordinate c has (c + 1) / 2 ~ Beta(3/2, 3/2).
    coords = (q[:, :, 0].reshape(-1) + 1) / 2
    assert scipy.stats.kstest(coords, scipy.stats.beta(1.5, 1.5).cdf).pvalue > 1e-3
    wide = SMALL["orthogonal_wide"][0]()
    np.testing.assert_allclose(np.asarray(wide) @ np.asarray(wide).T, np.eye(2), atol=1e-5)


# ---------------------------------------------------------------------------
# dtypes and shapes


def test_x64_known_answers():
    k = random.PRNGKey(0)
    with enable_x64(True):
        g = random.gamma(k, 2.0, (3,))
        assert g.dtype == np.float64
        np.testing.assert_array_equal(
            g, [1.3520307957942443, 1.124359450100187, 3.7324041613131316]
        )
        # The rate is float32 whatever x64 says; the counts are int64.
        p = random.poisson(k, 3.0, (3,))
        assert p.dtype == np.int64 and np.asarray(p).tolist() == [0, 0, 4]
        perm = random.permutation(k, 6)
        assert perm.dtype == np.int64 and np.asarray(perm).tolist() == [0, 1, 5, 4, 3, 2]


@pytest.mark.parametrize(
    "fun, shape, dtype",
    [
        (lambda k: random.gamma(k, 2.0, ()), (), np.float32),
        (lambda k: random.gamma(k, 2.0, (0,)), (0,), np.float32),
        (lambda k: random.poisson(k, 3.0, (0, 2)), (0, 2), np.int32),
        (lambda k: random.binomial(k, 5.0, 0.5, ()), (), np.float32),
        (
            lambda k: random.multinomial(k, 5.0, np.ones(3, np.float32) / 3, shape=(0, 3)),
            (0, 3),
            np.float32,
        ),
        (lambda k: random.dirichlet(k, np.ones(3, np.float32), (0,)), (0, 3), np.float32),
        (lambda k: random.categorical(k, np.zeros((0, 3), np.float32)), (0,), np.int32),
        (lambda k: random.choice(k, 5, (0,)), (0,), np.int32),
        (
            lambda k: random.choice(k, np.ones((2, 3), np.float32), (0, 4), axis=1),
            (2, 0, 4),
            np.float32,
        ),
        (lambda k: random.choice(k, 5), (), np.int32),
        (lambda k: random.permutation(k, 0), (0,), np.int32),
        (lambda k: random.bernoulli(k, 0.5, ()), (), np.bool_),
        (lambda k: random.truncated_normal(k, -1.0, 1.0, (0,)), (0,), np.float32),
        (lambda k: random.exponential(k, (2, 0, 3)), (2, 0, 3), np.float32),
        (
            lambda k: random.multivariate_normal(
                k, np.zeros(2, np.float32), np.eye(2, dtype=np.float32), (0,)
            ),
            (0, 2),
            np.float32,
        ),
        (lambda k: random.orthogonal(k, 0), (0, 0), np.float32),
        (lambda k: random.ball(k, 0, shape=(2,)), (2, 0), np.float32),
        (lambda k: random.t(k, 3.0, ()), (), np.float32),
    ],
)
def test_shapes_and_dtypes(fun, shape, dtype):
    x = fun(random.key(3))
    assert x.shape == shape and x.dtype == dtype
    assert np.asarray(x).shape == shape


def test_default_shapes_broadcast_the_parameters():
    def shape(fun):
        return eval_shape(fun, random.key(0)).shape

    ones3, ones21 = np.ones(3, np.float32), np.ones((2, 1), np.float32)
    assert shape(lambda k: random.beta(k, ones21, ones3)) == (2, 3)
    assert shape(lambda k: random.gamma(k, ones21, (4, 2, 3))) == (4, 2, 3)
    assert shape(lambda k: random.poisson(k, ones21)) == (2, 1)
    # As in JAX: weibull_min's draws broadcast with the parameters; double-sided
    # Maxwell's shape is `shape + parameter shape` (the parameter shape twice by default).
    assert shape(lambda k: random.weibull_min(k, ones3, 1.0)) == (3,)
    assert shape(lambda k: random.double_sided_maxwell(k, ones3, 1.0)) == (3, 3)
    assert shape(lambda k: random.double_sided_maxwell(k, ones3, 1.0, (2,))) == (2, 3)
    n2 = np.full(2, 5.0, np.float32)
    assert shape(lambda k: random.multinomial(k, n2, ones3 / 3, shape=(2, 3))) == (2, 3)
    assert shape(lambda k: random.dirichlet(k, np.ones((2, 3), np.float32))) == (2, 3)
    assert shape(lambda k: random.categorical(k, np.ones((4, 1), np.float32), 0, (3, 5))) == (3, 5)


def test_key_dtype():
    assert str(random.key_dtype()) == "key<fry>"
    assert random.key_dtype() == random.key(0).dtype
    assert random.key_dtype("threefry2x32") == random.key_dtype()
    with pytest.raises(ValueError, match="unrecognized PRNG implementation"):
        random.key_dtype("philox")


# ---------------------------------------------------------------------------
# Errors

_K = random.key(0)


@pytest.mark.parametrize(
    "fun, exc, match",
    [
        (
            lambda: random.bernoulli(_K, 0.5, (3,), mode="mid"),
            ValueError,
            "expected 'high' or 'low'",
        ),
        (lambda: random.bernoulli(_K, 1, (2,)), TypeError, "floating dtype, got int32"),
        (
            lambda: random.bernoulli(_K, np.ones(3, np.float32), (2,)),
            ValueError,
            r"shape \(3,\) do not broadcast",
        ),
        (
            lambda: random.exponential(_K, (2,), np.int32),
            ValueError,
            "dtype argument to `exponential` must be a float",
        ),
        (lambda: random.gamma(_K, np.ones(3, np.float32), (2,)), ValueError, "do not broadcast"),
        (lambda: random.gamma(_K, 1.0, (-1,)), ValueError, "negative dimensions"),
        (lambda: random.normal(_K, (2.0,)), TypeError, "shape must be a sequence of integers"),
        (lambda: random.geometric(_K, 0.5, (2,), np.float32), ValueError, "must be an int dtype"),
        (lambda: random.poisson(_K, 1.0, (2,), np.float32), ValueError, "must be an int dtype"),
        (
            lambda: random.binomial(_K, 5.0, 0.3, (2,), np.int32),
            ValueError,
            "must be a float dtype",
        ),
        (lambda: random.gumbel(_K, (2,), mode="x"), ValueError, "valid mode for gumbel got: x"),
        (
            lambda: random.categorical(_K, np.zeros((2, 3), np.float32), shape=(4,)),
            ValueError,
            "batch shape",
        ),
        (
            lambda: random.categorical(_K, np.zeros(3, np.float32), shape=(4,), replace=False),
            ValueError,
            r"\(4\) cannot exceed number of categories \(3\)",
        ),
        (
            lambda: random.categorical(_K, np.zeros(3, np.float32), axis=2),
            ValueError,
            "axis 2 is out of bounds",
        ),
        (
            lambda: random.categorical(_K, np.zeros(3, np.int32)),
            ValueError,
            "float dtype, got int32",
        ),
        (
            lambda: random.choice(_K, 3, (4,), replace=False),
            ValueError,
            r"larger sample \(size 4\) than population \(size 3\)",
        ),
        (lambda: random.choice(_K, 0, (2,)), ValueError, "a must be greater than 0"),
        (
            lambda: random.choice(_K, 3, (2,), p=np.ones(4, np.float32) / 4),
            ValueError,
            r"p has shape \(4,\) and a.shape\[axis\] is 3",
        ),
        (
            lambda: random.choice(_K, np.zeros((2, 3)), (2,), axis=2),
            ValueError,
            "axis 2 is out of bounds",
        ),
        (lambda: random.permutation(_K, 3.0), TypeError, "integer or at least 1-dimensional"),
        (
            lambda: random.permutation(_K, np.zeros((2, 3)), axis=3),
            ValueError,
            "axis 3 is out of bounds",
        ),
        (
            lambda: random.multivariate_normal(_K, np.zeros(2), np.eye(3)),
            ValueError,
            r"cov.shape == \(..., n, n\) for n=2",
        ),
        (
            lambda: random.multivariate_normal(_K, np.zeros(2), np.eye(2), method="lu"),
            ValueError,
            "method must be one of",
        ),
        (
            lambda: random.multivariate_normal(_K, np.zeros(()), np.eye(2)),
            ValueError,
            "mean.ndim >= 1",
        ),
        (
            lambda: random.multivariate_normal(_K, np.zeros(2), np.zeros(2)),
            ValueError,
            "cov.ndim >= 2",
        ),
        (lambda: random.orthogonal(_K, -1), ValueError, "negative dimensions"),
        (lambda: random.orthogonal(_K, 2.5), TypeError, "integer"),
        (lambda: random.ball(_K, 2.5), TypeError, "integer"),
        (lambda: random.dirichlet(_K, 1.0), ValueError, "alpha.ndim >= 1"),
        (lambda: random.dirichlet(_K, np.ones((2, 3)), (4,)), ValueError, "do not broadcast"),
        (
            lambda: random.multinomial(_K, 5.0, np.ones(3) / 3, shape=(2,)),
            ValueError,
            "do not broadcast",
        ),
        (
            lambda: random.gamma(np.zeros(3, np.float32), 1.0),
            TypeError,
            "raw key data of dtype uint32",
        ),
        (lambda: random.gamma(random.split(_K, 2), 1.0), ValueError, "single key"),
    ],
)
def test_errors(fun, exc, match):
    with pytest.raises(exc, match=match):
        fun()


def test_traced_count_needs_a_concrete_value():
    f = jit(lambda n: random.permutation(_K, n))
    with pytest.raises(polyjax_core.errors.ConcretizationTypeError):
        f(3)


# ---------------------------------------------------------------------------
# jit, vmap, grad


def _small_samplers(k):
    """Samplers of every family, at the signatures of SMALL (eager results known)."""
    return (
        random.gamma(k, 3.0, (5,), np.float16),
        random.poisson(k, 4.0, (5,), np.int16),
        random.choice(k, 10, (5,), replace=False),
        random.exponential(k, (5,), np.float16),
    )


def test_jit_matches_eager():
    k = random.PRNGKey(0)
    jitted = jit(_small_samplers)(k)
    for got, want in zip(jitted, _small_samplers(k), strict=True):
        assert got.dtype == want.dtype
        np.testing.assert_array_equal(np.asarray(got), np.asarray(want))


def _per_key_samplers(k):
    return (
        random.gamma(k, 1.5, (2,)),
        random.poisson(k, np.array([2.0, 40.0], np.float32)),
        random.binomial(k, 50.0, 0.4, (2,)),
        random.categorical(k, np.zeros((2, 3), np.float32)),
        random.permutation(k, 5),
        random.choice(k, 4, (2,), p=np.array([0.1, 0.2, 0.3, 0.4], np.float32)),
        random.multivariate_normal(k, np.zeros(2, np.float32), np.eye(2, dtype=np.float32)),
    )


def test_vmap_over_keys_matches_a_loop():
    keys = random.split(random.key(42), 3)
    batched = jit(vmap(_per_key_samplers))(keys)
    loop = [_per_key_samplers(k) for k in keys]
    for i, got in enumerate(batched):
        want = np.stack([np.asarray(row[i]) for row in loop])
        np.testing.assert_array_equal(np.asarray(got), want)
    # JAX's values for vmap(gamma) of these keys.
    want = [[1.377385139465332, 0.14587077498435974], [1.0705113410949707, 0.11776147037744522]]
    np.testing.assert_array_equal(batched[0][:2], np.float32(want))


def test_vmap_over_parameters():
    k = random.PRNGKey(0)
    a = np.array([0.5, 3.0], np.float32)
    got = vmap(lambda a: random.gamma(k, a, (2,)))(a)
    # JAX's values; the same key for both parameters, as a loop would do.
    np.testing.assert_array_equal(
        got,
        np.float32(
            [[0.8845648169517517, 1.0290775299072266], [2.5691018104553223, 2.7842020988464355]]
        ),
    )
    lam = np.array([3.0, 30.0], np.float32)
    got = vmap(lambda lam: random.poisson(k, lam, (3,)))(lam)
    want = np.stack([np.asarray(random.poisson(k, rate, (3,))) for rate in lam])
    np.testing.assert_array_equal(got, want)


def test_gamma_is_a_primitive_with_keys_and_parameters_batched():
    keys = random.split(random.PRNGKey(1), 2)
    a = np.array([[0.3, 2.0], [5.0, 0.9]], np.float32)
    both = vmap(lambda k, a: random.gamma(k, a))(keys, a)
    loop = np.stack([np.asarray(random.gamma(k, row)) for k, row in zip(keys, a, strict=True)])
    np.testing.assert_array_equal(both, loop)
    jaxpr = str(make_jaxpr(lambda k, a: random.loggamma(k, a))(random.PRNGKey(0), a))
    assert "random_gamma[log_space=True]" in jaxpr


# Gradients: JAX's values (implicit reparameterization of the gamma draws; the
# derivative of the incomplete gamma function is computed differently, so not
# to the last bit).
_KG = random.PRNGKey(0)


def _gamma_sum(a):
    return random.gamma(_KG, a).sum()


@pytest.mark.parametrize(
    "fun, args, want",
    [
        (lambda a: random.gamma(_KG, a, (3,)).sum(), (np.float32(2.5),), 2.821995258331299),
        (
            _gamma_sum,
            (np.float32([0.3, 1.0, 4.0]),),
            [2.2258236408233643, 0.9927736520767212, 0.8731967806816101],
        ),
        (lambda a: random.loggamma(_KG, a, (3,)).sum(), (np.float32(0.7),), 6.305974006652832),
        (
            lambda a, b: random.beta(_KG, a, b, (3,)).sum(),
            (np.float32(2.0), np.float32(3.0)),
            [0.433845192193985, -0.33046838641166687],
        ),
        (
            lambda a: (random.dirichlet(_KG, a) * np.arange(3, dtype=np.float32)).sum(),
            (np.float32([0.5, 1.0, 2.0]),),
            [-0.7056466341018677, -0.03232739120721817, 0.26705336570739746],
        ),
        (lambda d: random.t(_KG, d, (3,)).sum(), (np.float32(3.0),), 1.449195384979248),
        (
            lambda lo, hi: random.truncated_normal(_KG, lo, hi, (3,)).sum(),
            (np.float32(-1.0), np.float32(2.0)),
            [0.570186197757721, 1.0559711456298828],
        ),
        (
            lambda c: random.multivariate_normal(_KG, np.zeros(2, np.float32), c, (3,)).sum(),
            (np.float32([[2.0, 0.5], [0.5, 1.0]]),),
            [[0.39454472064971924, 0.35241854190826416], [0.35241854190826416, 0.5209232568740845]],
        ),
    ],
)
def test_gradients_match_jax(fun, args, want):
    argnums = tuple(range(len(args)))
    got = grad(fun, argnums)(*args)
    got = [np.asarray(g) for g in got]
    np.testing.assert_allclose(got if len(args) > 1 else got[0], want, rtol=2e-5)


def test_gamma_gradient_is_the_implicit_derivative():
    # d x / d a = -(dF/da)(a, x) / f(a, x) for the gamma CDF F and density f.
    a = np.float32([0.3, 1.0, 4.0])  # the signature of test_gradients_match_jax
    x = np.asarray(random.gamma(_KG, a), np.float64)
    g = np.asarray(grad(_gamma_sum)(a), np.float64)
    h = 1e-6 * a.astype(np.float64)
    a64 = a.astype(np.float64)
    dF_da = (scipy.special.gammainc(a64 + h, x) - scipy.special.gammainc(a64 - h, x)) / (2 * h)
    np.testing.assert_allclose(g, -dF_da / scipy.stats.gamma(a64).pdf(x), rtol=1e-3)


def test_check_grads_of_smooth_samplers():
    check_grads(
        lambda lo, hi: random.truncated_normal(_KG, lo, hi, (3,)),
        (np.float32(-1.0), np.float32(2.0)),
        order=2,
        rtol=2e-2,
        atol=2e-2,
    )
    mean = np.float32([1.0, -1.0])
    cov = np.float32([[2.0, 0.5], [0.5, 1.0]])
    check_grads(
        lambda m, c: random.multivariate_normal(_KG, m, c, (2,)),
        (mean, cov),
        order=1,
        rtol=2e-2,
        atol=2e-2,
    )
    check_grads(
        lambda lo, hi: random.uniform(_KG, (3,), minval=lo, maxval=hi),
        (np.float32(-1.0), np.float32(2.0)),
        order=2,
    )
