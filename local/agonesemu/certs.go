package agonesemu

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"encoding/pem"
	"math/big"
	"net"
	"time"
)

// CA is a certificate authority made for one run or test, as Agones'
// install makes allocator-tls-ca: it signs the allocator's server
// certificate and the clients' certificates.
type CA struct {
	PEM  []byte // the CA certificate: ca.crt
	cert *x509.Certificate
	key  *ecdsa.PrivateKey
}

// NewCA makes a CA named name, valid for a day.
func NewCA(name string) (*CA, error) {
	tmpl := &x509.Certificate{Subject: pkix.Name{CommonName: name}, IsCA: true, BasicConstraintsValid: true,
		NotAfter: time.Now().Add(24 * time.Hour), KeyUsage: x509.KeyUsageCertSign}
	der, key, err := sign(tmpl, nil)
	if err != nil {
		return nil, err
	}
	cert, err := x509.ParseCertificate(der)
	return &CA{PEM: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), cert: cert, key: key}, err
}

// sign makes a key and signs tmpl for it with ca (nil: itself), valid from
// an hour before now (or before NotAfter, for an expired one).
func sign(tmpl *x509.Certificate, ca *CA) ([]byte, *ecdsa.PrivateKey, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, nil, err
	}
	tmpl.SerialNumber, _ = rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 120))
	tmpl.NotBefore = time.Unix(min(time.Now().Unix(), tmpl.NotAfter.Unix())-3600, 0)
	parent, parentKey := tmpl, key
	if ca != nil {
		parent, parentKey = ca.cert, ca.key
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, parent, &key.PublicKey, parentKey)
	return der, key, err
}

// Issue signs a certificate for usage, valid until notAfter, for 127.0.0.1
// and localhost; it returns the certificate and its key as PEM.
func (ca *CA) Issue(usage x509.ExtKeyUsage, notAfter time.Time) (certPEM, keyPEM []byte, err error) {
	der, key, err := sign(&x509.Certificate{Subject: pkix.Name{CommonName: "agonesemu"}, NotAfter: notAfter, ExtKeyUsage: []x509.ExtKeyUsage{usage},
		KeyUsage: x509.KeyUsageDigitalSignature, IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1), net.IPv6loopback}, DNSNames: []string{"localhost"}}, ca)
	if err != nil {
		return nil, nil, err
	}
	kder, err := x509.MarshalECPrivateKey(key)
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kder}), err
}

// ClientSecret is the Secrets Manager secret a deployment reads
// (tlsSecretId): {"tls.crt", "tls.key"} of a client certificate ca issues,
// valid until notAfter, and "ca.crt": trust's certificate.
func (ca *CA) ClientSecret(trust *CA, notAfter time.Time) (string, error) {
	crt, key, err := ca.Issue(x509.ExtKeyUsageClientAuth, notAfter)
	if err != nil {
		return "", err
	}
	raw, err := json.Marshal(map[string]string{"tls.crt": string(crt), "tls.key": string(key), "ca.crt": string(trust.PEM)})
	return string(raw), err
}

// serverTLS is the allocator's TLS configuration: its certificate (ca's,
// valid until notAfter) and, unless noClientAuth (mTLS off: a fault), a
// client certificate required and verified against ca for client
// authentication (cmd/allocator's RequireAnyClientCert with its own
// verification, which refuses the same certificates with the same alert).
func (ca *CA) serverTLS(notAfter time.Time, noClientAuth bool) (*tls.Config, error) {
	crt, key, err := ca.Issue(x509.ExtKeyUsageServerAuth, notAfter)
	if err != nil {
		return nil, err
	}
	pair, err := tls.X509KeyPair(crt, key)
	if err != nil {
		return nil, err
	}
	cfg := &tls.Config{Certificates: []tls.Certificate{pair}, NextProtos: []string{"http/1.1"}, MinVersion: tls.VersionTLS12}
	if !noClientAuth {
		cfg.ClientCAs, cfg.ClientAuth = x509.NewCertPool(), tls.RequireAndVerifyClientCert
		cfg.ClientCAs.AddCert(ca.cert)
	}
	return cfg, nil
}
