"""polyjax demo: train a small neural network to read handwritten digits.

The data set is scikit-learn's copy of the UCI handwritten digits (1,797
images of 8x8 pixels, ten classes), which ships inside the package: nothing is
downloaded. The program is ordinary JAX code; it runs under JAX by changing the
imports to ``import jax`` and ``import jax.numpy as jnp``. It uses

- `random` to initialize the parameters and shuffle the data each epoch,
- `nn` for the activation, the log-softmax and one-hot labels,
- `vmap` to write the network for one image and run it on a batch,
- `grad` (as `value_and_grad`) for the loss's gradient,
- `jit` to compile the whole training step (forward, backward and update),

and prints the loss and the accuracy on the training and held-out images after
every epoch. Run it with the README's demo command:

    python3 -m pip install uv==0.13.8 && uv run --locked python examples/demo.py
"""

import time

import numpy as np
from sklearn.datasets import load_digits

import polyjax as jax
import polyjax.numpy as jnp
from polyjax import nn, random

LAYERS = (64, 128, 64, 10)
EPOCHS = 12
BATCH = 64
LEARNING_RATE = 0.2


def init_params(key, layers=LAYERS):
    """He-initialized weights and zero biases for each layer."""
    params = []
    keys = random.split(key, len(layers) - 1)
    for k, n_in, n_out in zip(keys, layers[:-1], layers[1:], strict=True):
        w = nn.initializers.he_uniform()(k, (n_in, n_out))
        params.append({"w": w, "b": jnp.zeros(n_out)})
    return params


def predict_one(params, image):
    """Log-probabilities of the ten classes for one flattened image."""
    h = image
    for layer in params[:-1]:
        h = nn.relu(h @ layer["w"] + layer["b"])
    logits = h @ params[-1]["w"] + params[-1]["b"]
    return nn.log_softmax(logits)


# The network is written for one image; vmap makes it work on a batch.
predict = jax.vmap(predict_one, in_axes=(None, 0))


def loss_fn(params, images, labels):
    """Mean cross-entropy of the batch."""
    log_probs = predict(params, images)
    return -jnp.mean(jnp.sum(nn.one_hot(labels, 10) * log_probs, axis=-1))


@jax.jit
def train_step(params, images, labels):
    loss, grads = jax.value_and_grad(loss_fn)(params, images, labels)
    params = jax.tree.map(lambda p, g: p - LEARNING_RATE * g, params, grads)
    return params, loss


@jax.jit
def accuracy(params, images, labels):
    return jnp.mean(jnp.argmax(predict(params, images), axis=-1) == labels)


def main():
    digits = load_digits()
    images = (digits.data / 16.0).astype(np.float32)  # pixels are 0..16
    labels = digits.target.astype(np.int32)

    key = random.key(0)
    key, split_key, init_key = random.split(key, 3)
    order = np.asarray(random.permutation(split_key, len(labels)))
    test_idx, train_idx = order[:297], order[297:]
    x_train, y_train = jnp.asarray(images[train_idx]), jnp.asarray(labels[train_idx])
    x_test, y_test = jnp.asarray(images[test_idx]), jnp.asarray(labels[test_idx])
    print(f"digits: {len(train_idx)} training and {len(test_idx)} held-out images of 8x8 pixels")

    params = init_params(init_key)
    n_batches = len(train_idx) // BATCH
    start = time.perf_counter()
    for epoch in range(1, EPOCHS + 1):
        key, shuffle_key = random.split(key)
        perm = np.asarray(random.permutation(shuffle_key, len(train_idx)))
        losses = []
        for b in range(n_batches):
            batch = perm[b * BATCH : (b + 1) * BATCH]
            params, loss = train_step(params, x_train[batch], y_train[batch])
            losses.append(loss)
        train_acc = float(accuracy(params, x_train, y_train))
        test_acc = float(accuracy(params, x_test, y_test))
        print(
            f"epoch {epoch:2d}  loss {float(np.mean(losses)):.4f}  "
            f"train accuracy {train_acc:.3f}  held-out accuracy {test_acc:.3f}"
        )
    elapsed = time.perf_counter() - start
    print(f"trained {EPOCHS} epochs of {n_batches} steps in {elapsed:.1f} s")
    print(f"final held-out accuracy: {test_acc:.3f}")


if __name__ == "__main__":
    main()
