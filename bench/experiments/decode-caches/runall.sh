#!/bin/bash
# runall.sh <label> <rblib> <pypath>: per-document instructions of the decode calls, one process per language
label=$1; rblib=$2; pyp=$3; cd /tmp/dcm/cg; rm -f $label.*
valgrind --tool=callgrind --callgrind-out-file=/tmp/dcm/cg/$label.rb --toggle-collect='dec_decode*' --dump-before='dec_reset*' ruby /tmp/dcm/rball.rb $rblib > $label.rb.log 2>&1 &
valgrind --tool=callgrind --callgrind-out-file=/tmp/dcm/cg/$label.py --toggle-collect=tersa_loads --dump-before=Dictionary_get_id /work/main/python/.venv/bin/python /tmp/dcm/pyall.py $pyp > $label.py.log 2>&1 &
wait
