# tests/remote/ngx.sh — nginx from Debian on a free loopback port (sourced
# after lib.sh).  A generated config under $T/ngx (prefix -p, config -c,
# no system file read), `daemon off` in the background of this shell so
# the PID is ours.  The access log has one line per request:
#   CONNECTION "REQUEST" "RANGE" "IF-MATCH" STATUS BYTES_SENT
# ngx_start ROOT [EXTRA_SERVER_LINES] -> NGX_URL, NGX_LOG

ngx_start() {
	local root=$1 extra=${2:-} port
	NGX_DIR=$T/ngx
	mkdir -p "$NGX_DIR/tmp" "$NGX_DIR/logs"
	port=$(free_port)
	NGX_PORT=$port
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
	server {
		listen 127.0.0.1:$port;
		root $root;
		$extra
	}
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
