package main

import (
	"bufio"
	"bytes"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"encoding/pem"
	"io"
	"math/big"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// writeServingCert writes a self-signed certificate for 127.0.0.1, ::1 and localhost, and its key.
func writeServingCert(t *testing.T, dir string) (certFile, keyFile string, roots *x509.CertPool) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "mindie-fault-proxy test"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1), net.IPv6loopback}, DNSNames: []string{"localhost"},
		KeyUsage:    x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}, BasicConstraintsValid: true, IsCA: true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	keyDER, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	certFile, keyFile = filepath.Join(dir, "proxy.crt"), filepath.Join(dir, "proxy.key")
	writeFile(t, certFile, string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})))
	writeFile(t, keyFile, string(pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: keyDER})))
	cert, _ := x509.ParseCertificate(der)
	roots = x509.NewCertPool()
	roots.AddCert(cert)
	return certFile, keyFile, roots
}

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
}

func TestUsageErrors(t *testing.T) {
	dir := t.TempDir()
	base := []string{"--upstream", "https://127.0.0.1:1", "--upstream-ca", "ca", "--cert", "c", "--key", "k"}
	for _, c := range []struct {
		args []string
		want string
	}{
		{nil, "--upstream is required"},
		{base[2:], "--upstream is required"},
		{base[:6], "--key is required"},
		{append([]string{"--upstream", "http://127.0.0.1:1"}, base[2:]...), "--upstream expects https://HOST:PORT"},
		{append([]string{"--upstream", "https://127.0.0.1:1/api"}, base[2:]...), "--upstream expects"},
		{append(base, "--fault", "GET:/x"), "--fault: missing KIND"},
		{append(base, "--listen", "127.0.0.1"), "--listen expects HOST:PORT"},
		{append(base, "--nope"), "flag provided but not defined: -nope"},
		{append(base, "extra"), `unexpected argument "extra"`},
	} {
		var stdout, stderr bytes.Buffer
		code := run(c.args, strings.NewReader(""), &stdout, &stderr, nil)
		if code != 2 || !strings.Contains(stderr.String(), c.want) || strings.Count(stderr.String(), "\n") != 1 ||
			stdout.Len() != 0 {
			t.Errorf("%q: exit %d, stderr %q", c.args, code, stderr.String())
		}
	}
	var stdout, stderr bytes.Buffer
	if code := run([]string{"--help"}, nil, &stdout, &stderr, nil); code != 0 ||
		!strings.HasPrefix(stdout.String(), "usage: mindie-fault-proxy") {
		t.Errorf("--help: %d %q", code, stdout.String())
	}
	// Not a usage error: a file that cannot be read, exit status 1.
	stderr.Reset()
	if code := run(append(base[:2], "--upstream-ca", filepath.Join(dir, "missing"), "--cert", "c", "--key", "k"),
		nil, io.Discard, &stderr, nil); code != 1 || !strings.Contains(stderr.String(), "--upstream-ca") ||
		strings.Count(stderr.String(), "\n") != 1 {
		t.Errorf("missing CA: %d %q", code, stderr.String())
	}
}

// proxyRun is run() in the background with its stdout read line by line.
type proxyRun struct {
	url   string
	exit  chan int
	stop  chan struct{}
	stdin *io.PipeWriter
}

func startRun(t *testing.T, args []string) *proxyRun {
	t.Helper()
	outR, outW := io.Pipe()
	inR, inW := io.Pipe()
	r := &proxyRun{exit: make(chan int, 1), stop: make(chan struct{}), stdin: inW}
	var stderr bytes.Buffer
	go func() {
		code := run(args, inR, outW, &stderr, r.stop)
		outW.Close()
		r.exit <- code
	}()
	line, err := bufio.NewReader(outR).ReadString('\n')
	if err != nil || !strings.HasPrefix(line, "ready https://") {
		t.Fatalf("first line %q (%v), exit %v", line, err, <-r.exit)
	}
	go func() { _, _ = io.Copy(io.Discard, outR) }()
	r.url = strings.TrimSuffix(strings.TrimPrefix(line, "ready "), "\n")
	return r
}

func (r *proxyRun) wait(t *testing.T) int {
	t.Helper()
	select {
	case code := <-r.exit:
		return code
	case <-time.After(capWait):
		t.Fatal("the proxy did not exit")
		return -1
	}
}

func TestRun(t *testing.T) {
	dir := t.TempDir()
	upstream := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"major":"1","minor":"37","auth":"`+r.Header.Get("Authorization")+`"}`)
	}))
	upstream.EnableHTTP2 = true
	upstream.StartTLS()
	defer upstream.Close()
	ca := filepath.Join(dir, "ca.crt")
	writeFile(t, ca, string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: upstream.Certificate().Raw})))
	cert, key, roots := writeServingCert(t, dir)
	token := filepath.Join(dir, "token")
	writeFile(t, token, "control-secret\n")
	logFile := filepath.Join(dir, "requests.jsonl")
	writeFile(t, logFile, `{"method":"GET","path":"/earlier","query":"","contentType":"","body":"","status":200}`+"\n")
	args := []string{"--upstream", upstream.URL, "--upstream-ca", ca, "--cert", cert, "--key", key,
		"--request-log", logFile, "--control-token", token, "--fault", "GET:/api:503:1"}

	client := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: roots},
		ForceAttemptHTTP2: true}}
	get := func(url, auth string) (int, string, string) {
		t.Helper()
		req, _ := http.NewRequest("GET", url, nil)
		req.Header.Set("Authorization", auth)
		resp, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b), resp.Proto
	}

	for _, listen := range []string{"127.0.0.1:0", "[::1]:0"} {
		t.Run(listen, func(t *testing.T) {
			if listen == "[::1]:0" {
				ln, err := net.Listen("tcp", listen)
				if err != nil {
					t.Skip("no IPv6 loopback:", err)
				}
				ln.Close()
			}
			p := startRun(t, append(args, "--listen", listen))
			if listen == "[::1]:0" && !strings.HasPrefix(p.url, "https://[::1]:") {
				t.Errorf("url %q", p.url)
			}
			if code, body, proto := get(p.url+"/version?timeout=5s", "Bearer user-token"); code != 200 ||
				!strings.Contains(body, `"auth":"Bearer user-token"`) || proto != "HTTP/2.0" {
				t.Errorf("/version: %d %s %s", code, body, proto)
			}
			if code, _, _ := get(p.url+"/api", "Bearer user-token"); code != 503 {
				t.Errorf("/api: %d", code)
			}
			if code, _, _ := get(p.url+"/proxy/faults", "Bearer user-token"); code != 401 {
				t.Errorf("control with another token: %d", code)
			}
			code, body, _ := get(p.url+"/proxy/faults", "Bearer control-secret")
			var list struct{ Faults []ruleView }
			if json.Unmarshal([]byte(body), &list); code != 200 || len(list.Faults) != 1 || list.Faults[0].Remaining != 0 {
				t.Errorf("faults: %d %s", code, body)
			}
			close(p.stop)
			if code := p.wait(t); code != 0 {
				t.Errorf("exit %d", code)
			}
			// Appended, one line per request, control requests not among them.
			b, _ := os.ReadFile(logFile)
			lines := strings.Split(strings.TrimSpace(string(b)), "\n")
			if len(lines) < 3 || !strings.Contains(lines[0], "/earlier") {
				t.Fatalf("log %q", lines)
			}
			last := lines[len(lines)-2:]
			if !strings.Contains(last[0], `"path":"/version","query":"timeout=5s"`) ||
				!strings.Contains(last[1], `"path":"/api"`) || !strings.Contains(last[1], `"status":503,"fault":"503"}`) ||
				strings.Contains(string(b), "user-token") {
				t.Errorf("log %q", last)
			}
		})
	}

	t.Run("exit-on-stdin-eof", func(t *testing.T) {
		p := startRun(t, append(args, "--exit-on-stdin-eof"))
		if code, _, _ := get(p.url+"/version", "Bearer x"); code != 200 {
			t.Errorf("/version: %d", code)
		}
		p.stdin.Close() // the harness is gone
		if code := p.wait(t); code != 0 {
			t.Errorf("exit %d", code)
		}
	})

	t.Run("listen error", func(t *testing.T) {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		defer ln.Close()
		var stderr bytes.Buffer
		a := append([]string(nil), args...)
		if code := run(append(a, "--listen", ln.Addr().String()), nil, io.Discard, &stderr, nil); code != 1 ||
			!strings.Contains(stderr.String(), "address already in use") {
			t.Errorf("exit %d, %q", code, stderr.String())
		}
	})
}
