package agones

import (
	"context"
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"strings"
	"time"

	"github.com/gamefabric-alloc/allocsvc/shared/secrets"
	"github.com/gamefabric-alloc/allocsvc/shared/upstreamhttp"
)

// Identity is an Agones allocator client's TLS credentials: the client
// certificate it presents and the only CA it trusts for the allocator's
// certificate. Its key never prints.
type Identity struct {
	// Fingerprint names the client certificate (SHA-256 of its DER): safe
	// to log, and what tells a rotated identity from the one it replaced.
	Fingerprint string
	cert        tls.Certificate
	roots       *x509.CertPool
	// same is the whole secret's digest: two reads of an unchanged secret
	// are the same identity, and share their connections (Client).
	same [32]byte
}

func (id *Identity) String() string { return "agones client certificate " + id.Fingerprint }

// GoString keeps %#v from printing the key.
func (id *Identity) GoString() string { return "agones.Identity{" + id.Fingerprint + "}" }

// secretDoc is the secret's JSON: the keys of Agones' own allocator client
// secret (tls.crt, tls.key) and CA secret (ca.crt).
type secretDoc struct {
	Cert string `json:"tls.crt"`
	Key  string `json:"tls.key"`
	CA   string `json:"ca.crt"`
}

// ParseIdentity reads {"tls.crt": PEM, "tls.key": PEM, "ca.crt": PEM}.
// Every failure wraps secrets.ErrBadSecret and never quotes the secret.
func ParseIdentity(secret string) (*Identity, error) {
	return parseIdentity(secret, time.Now())
}

func parseIdentity(secret string, now time.Time) (*Identity, error) {
	bad := func(format string, args ...any) (*Identity, error) {
		return nil, fmt.Errorf("%w: %s", secrets.ErrBadSecret, fmt.Sprintf(format, args...))
	}
	var doc secretDoc
	if err := json.Unmarshal([]byte(secret), &doc); err != nil {
		return bad(`the secret must be JSON {"tls.crt": PEM, "tls.key": PEM, "ca.crt": PEM}`)
	}
	var missing []string
	for _, f := range []struct{ name, v string }{{"tls.crt", doc.Cert}, {"tls.key", doc.Key}, {"ca.crt", doc.CA}} {
		if strings.TrimSpace(f.v) == "" {
			missing = append(missing, f.name)
		}
	}
	if len(missing) > 0 {
		return bad("the secret has no %s (PEM strings)", strings.Join(missing, ", "))
	}
	cert, err := tls.X509KeyPair([]byte(doc.Cert), []byte(doc.Key))
	if err != nil {
		// crypto/tls's texts name the problem, never the key's bytes.
		return bad("tls.crt and tls.key are not a certificate and its private key (%v)", err)
	}
	leaf := cert.Leaf
	if leaf == nil {
		if leaf, err = x509.ParseCertificate(cert.Certificate[0]); err != nil {
			return bad("tls.crt does not parse (%v)", err)
		}
	}
	switch {
	case now.After(leaf.NotAfter):
		return bad("the client certificate in tls.crt expired at %s", leaf.NotAfter.UTC().Format(time.RFC3339))
	case now.Before(leaf.NotBefore):
		return bad("the client certificate in tls.crt is not valid before %s", leaf.NotBefore.UTC().Format(time.RFC3339))
	}
	roots := x509.NewCertPool()
	if !roots.AppendCertsFromPEM([]byte(doc.CA)) {
		return bad("ca.crt holds no PEM certificate")
	}
	sum := sha256.Sum256(cert.Certificate[0])
	return &Identity{Fingerprint: "sha256:" + hex.EncodeToString(sum[:8]), cert: cert, roots: roots, same: sha256.Sum256([]byte(secret))}, nil
}

// httpClient is the HTTP client that speaks as id: TLS 1.2 or later, the
// allocator's certificate checked against ca.crt alone (no system roots),
// and a handshake in which the allocator did not ask for our certificate
// refused before anything is sent (mutual TLS is the allocator service's
// authentication; without it anyone could allocate there).
func (id *Identity) httpClient() *http.Client {
	return &http.Client{Transport: &http.Transport{DialTLSContext: id.dialTLS, MaxIdleConnsPerHost: 8, IdleConnTimeout: 90 * time.Second}}
}

func (id *Identity) dialTLS(ctx context.Context, network, addr string) (net.Conn, error) {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, err
	}
	raw, err := (&net.Dialer{Timeout: 10 * time.Second, KeepAlive: 30 * time.Second}).DialContext(ctx, network, addr)
	if err != nil {
		return nil, err
	}
	asked := false
	cfg := &tls.Config{MinVersion: tls.VersionTLS12, RootCAs: id.roots, ServerName: host,
		GetClientCertificate: func(*tls.CertificateRequestInfo) (*tls.Certificate, error) {
			asked = true
			return &id.cert, nil
		}}
	conn := tls.Client(raw, cfg)
	if err := conn.HandshakeContext(ctx); err != nil {
		_ = raw.Close()
		return nil, err
	}
	if !asked {
		_ = conn.Close()
		return nil, upstreamhttp.ErrNoClientAuth
	}
	return conn, nil
}
