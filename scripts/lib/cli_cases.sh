# The cases of scripts/compare_cli_outputs.sh: run by `cases.sh BINARY OUT DATA`
# in OUT, one numbered stdout/stderr/exit code (and model file) per case.
set -u
B=$1; O=$2; D=$3; mkdir -p "$O"; cd "$O"
i=0
run() { i=$((i+1)); "$B" "$@" --seed 7 --quiet > out_$i.txt 2> err_$i.txt; echo "rc=$?" >> out_$i.txt; }
runs() { i=$((i+1)); "$B" "$@" --seed 7 > out_$i.txt 2> err_$i.txt; echo "rc=$?" >> out_$i.txt; }
run0() { i=$((i+1)); "$B" "$@" > out_$i.txt 2> err_$i.txt; echo "rc=$?" >> out_$i.txt; }
G="fit gmm --input $D/x.csv --components 4"
run $G --output m$i.json --epsilon 1 --delta 1e-5 --data-norm 12
run $G --output m$i.json --epsilon 1 --delta 1e-5 --data-norm 12 --init random --iterations 5
run $G --output m$i.json --epsilon 1 --delta 1e-5 --data-norm 12 --mechanisms GGG --covariance diag --init random
run $G --output m$i.json --epsilon 1 --delta 1e-5 --data-norm 12 --mechanisms LLG --covariance spherical --init random --estimator map
run $G --output m$i.json --epsilon 1 --delta 1e-5 --data-norm 12 --component-frames off --accountant zcdp
run $G --output m$i.json --epsilon inf
run $G --output m$i.json --epsilon inf --covariance diag --init random
run $G --output m$i.json --epsilon 2 --delta 1e-5 --data-norm auto --bounds-epsilon 0.2
run $G --output m$i.json --epsilon 2 --delta 1e-5 --data-norm-from-data
run $G --output m$i.json --epsilon 1 --delta 1e-5 --data-norm 12 --data-center 1,1,1 --mechanisms GGG --unsafe-paper-mechanisms --covariance spherical --init random
run $G --output m$i.json --epsilon 1 --delta 1e-5
run $G --output m$i.json --epsilon 1 --data-norm 12
K="fit kmeans --input $D/x.npy --components 4"
for m in cdp-gauss cdp-laplace dplloyd dplloyd-zcdp; do run $K --method $m --output m$i.json --epsilon 1 --delta 1e-5 --data-norm 12; done
run $K --method cdp-gauss --output m$i.json --epsilon inf
run $K --method cdp-gauss --output m$i.json --epsilon 2 --delta 1e-5 --data-norm auto --bounds-epsilon 0.3
run $K --method dplloyd --output m$i.json --epsilon 1 --data-norm 12
run $K --method cdp-gauss --output m$i.json --epsilon 1 --delta 1e-5 --data-norm 12 --init random --accountant zcdp
F="fit fa --input $D/x.csv --factors 2"
run $F --output m$i.json --epsilon 1 --delta 1e-5 --data-norm 12
run $F --output m$i.json --epsilon 1 --delta 1e-5 --data-norm 12 --eigenvalue-repair shift --data-center 0.5,0.5,0.5
run $F --output m$i.json --epsilon inf
run $F --output m$i.json --epsilon 1 --delta 1e-5 --data-norm-from-data
run $F --output m$i.json --epsilon 1 --delta 1e-5
run fit fa --input $D/x.csv --output m$i.json --factors 9 --epsilon 1 --delta 1e-5 --data-norm 12
run fit gmm --input /nonexistent.csv --output m$i.json --components 2 --epsilon 1 --delta 1e-5 --data-norm 1
run fit gmm --input $D/x.csv --output /nonexistent/dir/m.json --components 2 --epsilon 1 --delta 1e-5 --data-norm 1
for m in dp clipped dp-em nonprivate; do runs fit gradient-em --model gmm --method $m --input $D/x.csv --iterations 5 --sigma 1 --epsilon 1 --delta 1e-5 --tau 10 --clip 3 --json --trajectory; done
# score/predict/sample on model 1
run0 score --model m1.json --input $D/x.csv --json
run0 predict --model m1.json --input $D/x.csv --proba --output pred$i.csv
runs sample --model m1.json -n 50 --output s$i.csv
run0 score --model m13.json --input $D/x.csv
run0 transform --model m22.json --input $D/x.csv --output t$i.csv
runs sample --model m22.json -n 20 --output s$i.csv
rm -f b.db
run0 budget init --budget-file b.db --dataset ds --epsilon 3 --delta 1e-4
run fit gmm --input $D/x.csv --components 2 --output m$i.json --epsilon 1 --delta 1e-5 --data-norm 12 --budget-file b.db --dataset ds
run fit kmeans --input $D/x.csv --method dplloyd --components 2 --output m$i.json --epsilon 1 --data-norm 12 --budget-file b.db --dataset ds
runs fit gradient-em --model gmm --method dp --input $D/x.csv --iterations 3 --sigma 1 --epsilon 0.5 --delta 1e-5 --tau 10 --budget-file b.db --dataset ds
run fit fa --input $D/x.csv --factors 1 --output m$i.json --epsilon 5 --delta 1e-5 --data-norm 12 --budget-file b.db --dataset ds
run fit gmm --input $D/x.csv --components 2 --output m$i.json --epsilon inf --budget-file b.db --dataset ds
run fit gmm --input $D/x.csv --components 2 --output m$i.json --epsilon 1 --delta 1e-5 --data-norm 12 --dataset ds
run0 budget show --budget-file b.db --json
run0 fit gmm --input $D/x.csv --components 2 --output m$i.json --epsilon 1 --delta 1e-5 --data-norm 12 --seed x
echo done $i
