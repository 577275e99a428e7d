package client

// resources sets the resource services of c.
func (c *Client) resources() {}
