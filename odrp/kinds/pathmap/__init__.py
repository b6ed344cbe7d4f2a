"""Service-chain mapping on bi-modal networks (Asaduzzaman & Maheswaran): kind ``pathmap``."""
