# tests/remote/ceph.sh — a one-node Ceph cluster with a RADOS Gateway (sourced
# after lib.sh).
#
# One mon, one OSD on memstore (pool size 1), no mgr, one radosgw (beast) on
# a free loopback port, cephx on.  Everything — config (passed with -c),
# keyrings, mon store, OSD data, sockets, logs — lives under $CEPH_DIR, a
# directory inside the test's temp dir.  The daemons run in the foreground
# (-f) in the background of this shell, so their PIDs are ours and the EXIT
# trap of lib.sh kills them.  The mon's paxos intervals are shortened
# (0.05 s / 0.01 s): with the defaults every map change waits ~1 s and the
# cluster needs ~12 s to come up instead of ~2 s.
#
# After ceph_start: RGW_URL, RGW_KEY, RGW_SECRET (a user made with
# radosgw-admin user create), CEPH_START_MS (start time), CEPH_CONF.

ceph_start() {
	local t0 mon_port rgw_port fsid osd_uuid
	t0=$(date +%s%N)
	CEPH_DIR=$T/c
	mkdir -p "$CEPH_DIR"/{mon,osd,run,log,rgw}
	CEPH_CONF=$CEPH_DIR/ceph.conf
	mon_port=$(free_port)
	rgw_port=$(free_port)
	fsid=$(uuidgen)
	cat >"$CEPH_CONF" <<CONF
[global]
fsid = $fsid
mon host = v2:127.0.0.1:$mon_port
mon initial members = a
public addr = 127.0.0.1
ms bind ipv6 = false
auth cluster required = cephx
auth service required = cephx
auth client required = cephx
keyring = $CEPH_DIR/keyring.\$name
run dir = $CEPH_DIR/run
admin socket = $CEPH_DIR/run/\$name.asok
log file = $CEPH_DIR/log/\$name.log
pid file = $CEPH_DIR/run/\$name.pid
osd pool default size = 1
osd pool default min size = 1
osd pool default pg num = 8
osd pool default pgp num = 8
mon allow pool size one = true
mon warn on pool no redundancy = false
osd crush chooseleaf type = 0
osd objectstore = memstore
memstore device bytes = 536870912
mon data = $CEPH_DIR/mon
osd data = $CEPH_DIR/osd
paxos propose interval = 0.05
paxos min wait = 0.01
mon osd auto mark in = true
osd max object name len = 460
osd max object namespace len = 64
rgw frontends = beast endpoint=127.0.0.1:$rgw_port
rgw data = $CEPH_DIR/rgw
rgw dns name = 127.0.0.1
CONF
	{
		ceph-authtool --create-keyring "$CEPH_DIR/keyring.mon.a" --gen-key -n mon. --cap mon 'allow *'
		ceph-authtool --create-keyring "$CEPH_DIR/keyring.client.admin" --gen-key -n client.admin \
			--cap mon 'allow *' --cap osd 'allow *' --cap mgr 'allow *'
		ceph-authtool "$CEPH_DIR/keyring.mon.a" --import-keyring "$CEPH_DIR/keyring.client.admin"
	} >>"$CEPH_DIR/log/setup.log" || ceph_fail "ceph-authtool"
	monmaptool --create --addv a "[v2:127.0.0.1:$mon_port]" --fsid "$fsid" "$CEPH_DIR/monmap" \
		>>"$CEPH_DIR/log/setup.log" || ceph_fail "monmaptool"
	ceph-mon -c "$CEPH_CONF" --mkfs -i a --monmap "$CEPH_DIR/monmap" \
		--keyring "$CEPH_DIR/keyring.mon.a" 2>>"$CEPH_DIR/log/setup.log" || ceph_fail "ceph-mon --mkfs"
	ceph-mon -c "$CEPH_CONF" -i a -f >>"$CEPH_DIR/log/setup.log" 2>&1 &
	SRV_PIDS+=($!)
	CEPH_MON_PID=$!
	osd_uuid=$(uuidgen)
	local id
	id=$(cep osd new "$osd_uuid") || ceph_fail "ceph osd new"
	[ "$id" = 0 ] || ceph_fail "osd id $id"
	cep auth get-or-create osd.0 mon 'allow profile osd' osd 'allow *' mgr 'allow profile osd' \
		-o "$CEPH_DIR/keyring.osd.0" >/dev/null || ceph_fail "osd key"
	ceph-osd -c "$CEPH_CONF" -i 0 --mkfs --osd-uuid "$osd_uuid" \
		>>"$CEPH_DIR/log/setup.log" 2>&1 || ceph_fail "ceph-osd --mkfs"
	ceph-osd -c "$CEPH_CONF" -i 0 -f >>"$CEPH_DIR/log/setup.log" 2>&1 &
	SRV_PIDS+=($!)
	CEPH_OSD_PID=$!
	cep auth get-or-create client.rgw.a mon 'allow rw' osd 'allow rwx' \
		-o "$CEPH_DIR/keyring.client.rgw.a" >/dev/null || ceph_fail "rgw key"
	radosgw -c "$CEPH_CONF" -n client.rgw.a -f >>"$CEPH_DIR/log/setup.log" 2>&1 &
	SRV_PIDS+=($!)
	CEPH_RGW_PID=$!
	RGW_URL=http://127.0.0.1:$rgw_port
	wait_http "$RGW_URL/" 60 || ceph_fail "radosgw did not answer on $RGW_URL"
	RGW_KEY=NFTESTKEY$(od -An -N6 -tx1 /dev/urandom | tr -d ' \n' | tr a-f A-F)
	RGW_SECRET=$(od -An -N20 -tx1 /dev/urandom | tr -d ' \n')
	radosgw-admin -c "$CEPH_CONF" user create --uid=nftest --display-name=nftest \
		--access-key="$RGW_KEY" --secret="$RGW_SECRET" >/dev/null 2>>"$CEPH_DIR/log/setup.log" ||
		ceph_fail "radosgw-admin user create"
	CEPH_START_MS=$((($(date +%s%N) - t0) / 1000000))
}

# the ceph CLI as client.admin of this cluster, bounded in time
cep() { timeout 30 ceph -c "$CEPH_CONF" --connect-timeout 20 "$@" 2>>"$CEPH_DIR/log/setup.log"; }

ceph_fail() {
	echo "--- ceph logs:" >&2
	tail -20 "$CEPH_DIR"/log/*.log >&2 2>/dev/null
	fail "ceph: $*"
}

# total RSS of the three daemons in KiB
ceph_rss_kib() {
	local p s=0 r
	for p in "$CEPH_MON_PID" "$CEPH_OSD_PID" "$CEPH_RGW_PID"; do
		r=$(awk '/^VmRSS/ {print $2}' "/proc/$p/status" 2>/dev/null || echo 0)
		s=$((s + ${r:-0}))
	done
	echo "$s"
}

# s3put BUCKET KEY FILE: upload with curl --aws-sigv4 (an independent
# client: the library only reads).  x-amz-content-sha256 carries the
# body's hash: curl signs it but does not send it, and RGW refuses a
# signed request without it.
s3curl() { # METHOD PATH [curl args...]
	local m=$1 p=$2; shift 2
	curl -sS --max-time 20 -X "$m" --aws-sigv4 "aws:amz:us-east-1:s3" \
		--user "$RGW_KEY:$RGW_SECRET" "$@" "$RGW_URL/$p"
}
s3mb() {
	s3curl PUT "$1" -H "x-amz-content-sha256: e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855" \
		-o /dev/null -w '%{http_code}' | grep -q '^200$' || fail "make bucket $1"
}
s3put() {
	local h
	h=$(sha256sum "$3" | cut -d' ' -f1)
	s3curl PUT "$1/$2" -H "x-amz-content-sha256: $h" -T "$3" -o /dev/null -w '%{http_code}' |
		grep -q '^200$' || fail "put $1/$2"
}
