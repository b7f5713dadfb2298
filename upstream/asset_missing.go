package upstream

// An asset reference names an asset by id, and the data node may not know
// it (a rejected proposal's asset, say). The reference is still the object
// with that id: its other fields are unknown, and say so one by one.

// MissingAsset is the asset a reference names when the data node does not
// know it (err says so): its ID is known, and KnownStatus and KnownDetails
// return err.
func MissingAsset(id string, err error) *Asset {
	return &Asset{ID: id, NotFound: err}
}

// KnownStatus is the asset's status (GraphQL Asset.status), or the error of
// a MissingAsset.
func (a *Asset) KnownStatus() (AssetStatus, error) {
	if a.NotFound != nil {
		return "", a.NotFound
	}
	return a.Status, nil
}

// KnownDetails is the asset's details (GraphQL Asset.details), or nil and
// the error of a MissingAsset.
func (a *Asset) KnownDetails() (*AssetDetails, error) {
	if a.NotFound != nil {
		return nil, a.NotFound
	}
	return &a.Details, nil
}
