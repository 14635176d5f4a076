package etcdstoretest

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"time"
)

// TLSFiles are the PEM files of one TLS identity and the CA that signed it.
type TLSFiles struct {
	Cert, Key, CA string
}

// ClientConfig is a TLS client configuration presenting f's certificate and trusting its CA.
func (f TLSFiles) ClientConfig() (*tls.Config, error) {
	pair, err := tls.LoadX509KeyPair(f.Cert, f.Key)
	if err != nil {
		return nil, err
	}
	ca, err := os.ReadFile(f.CA)
	if err != nil {
		return nil, err
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(ca) {
		return nil, errors.New("no CA certificate")
	}
	return &tls.Config{MinVersion: tls.VersionTLS12, Certificates: []tls.Certificate{pair}, RootCAs: pool}, nil
}

// PKI is a test certificate authority with a server identity for 127.0.0.1 and a client
// identity, and a second, unrelated authority with its own client identity.
type PKI struct {
	Server, Client, Stranger TLSFiles
}

// NewPKI writes the PKI's keys and certificates (ECDSA P-256, valid for a day) into dir.
func NewPKI(dir string) (PKI, error) {
	ca, caKey, caFile, err := authority(dir, "ca")
	if err != nil {
		return PKI{}, err
	}
	other, otherKey, otherFile, err := authority(dir, "other-ca")
	if err != nil {
		return PKI{}, err
	}
	var p PKI
	if p.Server, err = leaf(dir, "server", ca, caKey, caFile, true); err != nil {
		return PKI{}, err
	}
	if p.Client, err = leaf(dir, "client", ca, caKey, caFile, false); err != nil {
		return PKI{}, err
	}
	if p.Stranger, err = leaf(dir, "stranger", other, otherKey, otherFile, false); err != nil {
		return PKI{}, err
	}
	return p, nil
}

var serial int64

func template(cn string) *x509.Certificate {
	serial++
	return &x509.Certificate{
		SerialNumber: big.NewInt(serial),
		Subject:      pkix.Name{CommonName: cn},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(24 * time.Hour),
	}
}

func writePEM(path, kind string, der []byte) error {
	return os.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: kind, Bytes: der}), 0o600)
}

func authority(dir, name string) (*x509.Certificate, *ecdsa.PrivateKey, string, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, nil, "", err
	}
	t := template(name)
	t.IsCA, t.BasicConstraintsValid = true, true
	t.KeyUsage = x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature
	der, err := x509.CreateCertificate(rand.Reader, t, t, &key.PublicKey, key)
	if err != nil {
		return nil, nil, "", err
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, nil, "", err
	}
	path := filepath.Join(dir, name+".pem")
	return cert, key, path, writePEM(path, "CERTIFICATE", der)
}

func leaf(dir, name string, ca *x509.Certificate, caKey *ecdsa.PrivateKey, caFile string, server bool) (TLSFiles, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return TLSFiles{}, err
	}
	t := template(name)
	t.KeyUsage = x509.KeyUsageDigitalSignature
	t.ExtKeyUsage = []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}
	if server {
		t.ExtKeyUsage = append(t.ExtKeyUsage, x509.ExtKeyUsageServerAuth)
		t.IPAddresses = []net.IP{net.IPv4(127, 0, 0, 1)}
	}
	der, err := x509.CreateCertificate(rand.Reader, t, ca, &key.PublicKey, caKey)
	if err != nil {
		return TLSFiles{}, err
	}
	keyDER, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		return TLSFiles{}, err
	}
	f := TLSFiles{Cert: filepath.Join(dir, name+".pem"), Key: filepath.Join(dir, name+"-key.pem"), CA: caFile}
	if err := writePEM(f.Cert, "CERTIFICATE", der); err != nil {
		return TLSFiles{}, err
	}
	return f, writePEM(f.Key, "PRIVATE KEY", keyDER)
}
