package client_test

import "testing"

func testReceived(t *testing.T, e *env) {}
func testCatalog(t *testing.T, e *env)  {}
func testCAFs(t *testing.T, e *env)     {}
func testSettings(t *testing.T, e *env) {}
func testMail(t *testing.T, e *env)     {}
func testWebhooks(t *testing.T, e *env) {}
func testTenancy(t *testing.T, e *env)  {}
