"""The README's Python quick start: a private Gaussian mixture of the bundled
Gowalla check-ins, then synthetic records sampled from it.

Run from the repository root: /usr/bin/python3 examples/python/quick_start.py
"""
import pandas as pd

import dpem

checkins = pd.read_csv("data/gowalla_nyc_checkins.csv")  # latitude, longitude
# epsilon and the PUBLIC domain (NYC's bounding box: centre and radius in
# degrees, not read from the data) have no defaults.
model = dpem.GaussianMixture(5, epsilon=1.0, delta=1e-5,
                             data_norm=0.36, data_center=[40.70, -73.98])
model.fit(checkins)
print(f"certified (epsilon, delta) = ({model.privacy_['epsilon']:.3f}, "
      f"{model.privacy_['delta']:g}); mean log-likelihood {model.score(checkins):.3f}")
synthetic, component = model.sample(1000)  # post-processing: no budget spent
pd.DataFrame(synthetic, columns=checkins.columns).to_csv("out/gowalla_synthetic.csv",
                                                         index=False)
model.to_json("out/gowalla_python.json")  # the CLI's model file: dpem score works on it
