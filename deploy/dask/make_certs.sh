#!/bin/sh
# Certificates for grading on a Dask cluster (deploy/README.md, "Grading past one machine (Dask)").
#
#   deploy/dask/make_certs.sh DIR [DAYS]
#
# Makes, in DIR (created, mode 700), a private certificate authority for this class and one certificate
# per role, each signed by it:
#   ca.pem                      the authority's certificate: everyone (instructor's machine, scheduler, workers)
#   ca-key.pem                  the authority's key: keep it offline; it goes nowhere
#   scheduler.pem, scheduler-key.pem   the scheduler
#   worker.pem, worker-key.pem         every worker
#   client.pem, client-key.pem         the instructor's machine (python -m dpgrader.classroom grade --tls-cert ...)
# Dask checks that a peer's certificate is signed by ca.pem (both ways) and does not check host names, so
# the same files serve any address. Any certificate signed by this authority may join the cluster and run
# code on its workers: use a new authority per class (or term) and never reuse one from elsewhere.
set -eu
dir=${1:?usage: make_certs.sh DIR [DAYS]}
days=${2:-180}
umask 077
mkdir -p "$dir"
cd "$dir"
if [ -e ca.pem ] || [ -e ca-key.pem ]; then
    echo "make_certs.sh: $dir already holds a certificate authority; not overwriting it" >&2
    exit 1
fi
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days "$days" -subj "/CN=dp-course grading CA" \
    -addext "basicConstraints=critical,CA:TRUE" -addext "keyUsage=critical,keyCertSign,cRLSign" \
    -keyout ca-key.pem -out ca.pem 2>/dev/null
# every role both listens and connects (workers talk to each other), hence serverAuth and clientAuth
printf '%s\n' "basicConstraints=CA:FALSE" "keyUsage=critical,digitalSignature" \
    "extendedKeyUsage=serverAuth,clientAuth" > leaf.ext
for role in scheduler worker client; do
    openssl req -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -subj "/CN=dp-course grading $role" \
        -keyout "$role-key.pem" -out "$role.csr" 2>/dev/null
    openssl x509 -req -in "$role.csr" -CA ca.pem -CAkey ca-key.pem -CAcreateserial -days "$days" \
        -extfile leaf.ext -out "$role.pem" 2>/dev/null
    rm "$role.csr"
done
rm leaf.ext ca.srl
chmod 644 ca.pem scheduler.pem worker.pem client.pem
echo "made in $dir: ca.pem (+ ca-key.pem, keep offline), scheduler.pem/-key.pem, worker.pem/-key.pem, client.pem/-key.pem"
