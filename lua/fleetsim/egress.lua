-- Data-transfer-out prices per GB, in monthly tiers: { from = GB per month, usd_per_gb }.
-- From the providers' public price pages for data transfer out to the internet: AWS
-- EC2 and Azure bandwidth pricing (2026), Google Cloud network pricing, premium and
-- standard tiers (2026-04); the last tier runs on without end.
-- A pool's cost takes one by name (egress = "AWS"), a table of the same shape, or a
-- flat price per GB (egress = 0.09).
return {
  ["AWS"] = {
    { from = 0, usd_per_gb = 0.00 },
    { from = 100, usd_per_gb = 0.09 },
    { from = 10240, usd_per_gb = 0.085 },
    { from = 51200, usd_per_gb = 0.07 },
    { from = 153600, usd_per_gb = 0.05 },
  },
  ["GCP premium"] = { { from = 0, usd_per_gb = 0.12 } },
  ["GCP standard"] = { { from = 0, usd_per_gb = 0.085 } },
  ["Azure"] = {
    { from = 0, usd_per_gb = 0.00 },
    { from = 100, usd_per_gb = 0.087 },
  },
}
