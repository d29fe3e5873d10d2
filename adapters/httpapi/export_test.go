package httpapi

// OwnsKeyRoute is ownsKeyRoute, for the tests of the whole router.
var OwnsKeyRoute = ownsKeyRoute
