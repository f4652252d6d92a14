# tests/remote/ngx.sh — nginx from Debian on a free loopback port (sourced
# after lib.sh).  A generated config under $T/ngx (prefix -p, config -c,
# no system file read), `daemon off` in the background of this shell so
# the PID is ours.  The access log has one line per request:
#   CONNECTION "REQUEST" "RANGE" "IF-MATCH" STATUS BYTES_SENT
# ngx_start ROOT [EXTRA_SERVER_LINES] -> NGX_URL, NGX_LOG
# With NGX_TLS=1 a second server speaks TLS with HTTP/2 on another port
# (NGX_TLS_URL), with a certificate for 127.0.0.1 from a CA made here
# ($NGX_DIR/ca.pem, in no system store); its /down/ redirects to plain http.

# a throwaway CA and a server certificate for IP 127.0.0.1
ngx_make_certs() {
	local d=$NGX_DIR/tls
	mkdir -p "$d"
	{
		openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes \
			-keyout "$d/ca.key" -out "$NGX_DIR/ca.pem" -days 2 -subj /CN=nf-test-ca
		openssl req -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes \
			-keyout "$d/srv.key" -out "$d/srv.csr" -subj /CN=127.0.0.1
		printf 'subjectAltName=IP:127.0.0.1\n' >"$d/ext"
		openssl x509 -req -in "$d/srv.csr" -CA "$NGX_DIR/ca.pem" -CAkey "$d/ca.key" \
			-CAcreateserial -out "$d/srv.pem" -days 2 -extfile "$d/ext"
	} >"$d/log" 2>&1 || { cat "$d/log" >&2; fail "openssl: test certificates"; }
}

ngx_start() {
	local root=$1 extra=${2:-} port
	NGX_DIR=$T/ngx
	mkdir -p "$NGX_DIR/tmp" "$NGX_DIR/logs"
	port=$(free_port)
	NGX_PORT=$port
	local tls=""
	if [ "${NGX_TLS:-0}" = 1 ]; then
		ngx_make_certs
		NGX_TLS_PORT=$(free_port)
		NGX_TLS_URL=https://127.0.0.1:$NGX_TLS_PORT
		tls="server {
		listen 127.0.0.1:$NGX_TLS_PORT ssl http2;
		ssl_certificate $NGX_DIR/tls/srv.pem;
		ssl_certificate_key $NGX_DIR/tls/srv.key;
		root $root;
		location /down/ { return 302 http://127.0.0.1:$port/d/e.ninfer; }
	}"
	fi
	NGX_LOG=$NGX_DIR/logs/access.log
	cat >"$NGX_DIR/nginx.conf" <<CONF
daemon off;
master_process on;
worker_processes 1;
user root root;
pid $NGX_DIR/nginx.pid;
error_log $NGX_DIR/logs/error.log info;
events { worker_connections 64; }
http {
	default_type application/octet-stream;
	log_format nf '\$connection "\$request" "\$http_range" "\$http_if_match" \$status \$bytes_sent';
	access_log $NGX_LOG nf;
	client_body_temp_path $NGX_DIR/tmp/body;
	proxy_temp_path $NGX_DIR/tmp/proxy;
	fastcgi_temp_path $NGX_DIR/tmp/fastcgi;
	uwsgi_temp_path $NGX_DIR/tmp/uwsgi;
	scgi_temp_path $NGX_DIR/tmp/scgi;
	keepalive_requests 10000;
	keepalive_timeout 60s;
	# off for the tests: their limit_rate locations pace transfers finely
	# only without it; bench/remote_read.sh sets NGX_SENDFILE=on, as
	# Debian's own nginx.conf has it (bench/README.md, remote reads)
	sendfile ${NGX_SENDFILE:-off};
	server {
		listen 127.0.0.1:$port;
		root $root;
		$extra
	}
	$tls
}
CONF
	nginx -p "$NGX_DIR" -c "$NGX_DIR/nginx.conf" -e "$NGX_DIR/logs/error.log" &
	SRV_PIDS+=($!)
	NGX_PID=$!
	NGX_URL=http://127.0.0.1:$port
	wait_http "$NGX_URL/" 10 || { cat "$NGX_DIR/logs/error.log" >&2; fail "nginx did not start"; }
	: >"$NGX_LOG"
}

# requests in the access log (since the last ngx_clear)
ngx_requests() { wc -l <"$NGX_LOG"; }
ngx_clear() { : >"$NGX_LOG"; }
# ngx_settle: every request made so far is in the access log.  nginx writes
# a request's line after its response, so a client may be gone before its
# line is there; one worker handles events in order, so once the line of a
# sentinel request (GET /.nf-settle/N, a 404, left in the log) is written,
# every earlier one is too.
ngx_settle() {
	local id=$RANDOM$RANDOM
	curl -s -o /dev/null --max-time 5 "$NGX_URL/.nf-settle/$id"
	for _ in $(seq 250); do grep -q "GET /.nf-settle/$id " "$NGX_LOG" && return 0; sleep 0.02; done
	fail "nginx did not log the sentinel request /.nf-settle/$id"
}
